"""A worker for tests/distribute/test_collective.py: joins the group from the environment
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and runs one scenario named by argv[1]; prints
'RESULT <json>' or 'ERROR <TypeName>: <message>'."""

import json
import os
import sys
import time

import torch

from ndflow.core.errors import OpError
from ndflow.distribute import collective


def main(scenario: str) -> dict:
    spec = collective.initialize(timeout_seconds=float(os.environ.get("TEST_TIMEOUT", "20")))
    rank = spec.rank
    if scenario == "reduce":
        # many small tensors + one over the bucket size, mixed dtypes
        ts = [torch.full((3, 2), float(rank + i)) for i in range(5)]
        ts.append(torch.arange(10, dtype=torch.int64) * (rank + 1))
        ts.append(torch.full((300,), float(rank), dtype=torch.float64))
        summed = collective.all_reduce(ts, bucket_bytes=64)
        mean = collective.all_reduce(ts, op=collective.MEAN)
        bcast = collective.broadcast([torch.full((4,), float(rank + 7))], root=1)
        return {"sum": [t.reshape(-1)[0].item() for t in summed],
                "int_sum": summed[5].tolist(), "mean0": mean[0][0, 0].item(),
                "bcast": bcast[0].tolist(), "inputs_untouched": ts[0][0, 0].item() == rank}
    if scenario == "mismatch":
        shape = (3, 4) if rank == 0 else (4, 3)
        collective.check_consistent([("bias", (4,), "float32"), ("dense/kernel", shape,
                                                                 "float32")])
        return {}
    if scenario == "hvd_mismatch":
        import ndflow as tf
        import ndflow.distribute.horovod as hvd
        hvd.init()
        shape = [5, 3] if rank == 0 else [3, 5]
        kernel = tf.Variable(tf.zeros(shape), name="dense/kernel")
        hvd.broadcast_variables([tf.Variable(tf.zeros([3]), name="bias"), kernel], 0)
        return {}
    if scenario == "gather":
        import ndflow as tf
        import ndflow.distribute.horovod as hvd
        hvd.init()
        x = tf.fill([rank + 1, 2], float(rank))  # first dims differ: 1 and 2 rows
        eager = hvd.allgather(x).numpy().tolist()
        graph = tf.function(hvd.allgather)(x).numpy().tolist()
        return {"eager": eager, "graph": graph,
                "objects": hvd.allgather_object({"rank": rank}),
                "bcast": hvd.broadcast_object(f"from {rank}", root_rank=1)}
    if scenario == "die":
        x = torch.ones(4)
        for step in range(1000):
            if rank == 1 and step == 3:
                os._exit(17)  # a peer killed mid-run
            t0 = time.time()
            try:
                collective.all_reduce([x])
            except OpError as e:
                print(f"ELAPSED {time.time() - t0:.1f}", flush=True)
                raise e
            time.sleep(0.05)
    raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    try:
        print("RESULT " + json.dumps(main(sys.argv[1])), flush=True)
    except OpError as e:
        print(f"ERROR {type(e).__name__}: {e.message}", flush=True)
        sys.exit(1)
