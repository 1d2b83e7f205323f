"""Data-parallel scaling of the CIFAR-10 model with ndflow's horovod API on torch.distributed.

    python benchmarks/data_parallel.py [--steps 30] [--warmup 5] [--batch 128] [--no-pin]

The model is the tutorial's (ndflow/models/image/cifar10/cifar10.py: inference + loss with
weight decay), trained by a TF1 Session with SGD at `batch` images per worker (24x24x3).
Configurations, each in fresh processes:
- 1 process, 1 intra-op thread (pinned to core 0);
- 1 process, 2 threads (cores 0-1);
- 2 processes of 1 thread each, pinned to cores 0 and 1, started by
  `python -m ndflow.distribute.run -np 2`, gradients averaged by
  `hvd.DistributedOptimizer` (bucketed CollectiveReduceV2 over gloo on loopback);
- the same 2 processes as a user starts them: the default thread count (every core each),
  unpinned, libgomp's default spin, following the free cores (issue 53) and, for comparison,
  with NDFLOW_FOLLOW_FREE_CORES=0.
Figures: steps/s per process, images/s in total, the all-reduce time per step (the model's
gradients through the same bucketed all-reduce, timed alone in the 2-process run), and the
scaling efficiency = 2-process images/s / (2 x 1-process-1-thread images/s); and the same
network in PyTorch with DistributedDataParallel (gloo), 1 vs 2 processes, as the peer (its
scaling on this machine in the same run is what ndflow's should match). Bar (issue 12):
2 workers on 2 cores >= 1.6x the throughput of one 1-thread worker. The machine may be shared
with other jobs: figures are indicative; each is the best of `--rounds` timed windows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from machine import cpu_line

ROOT = Path(__file__).resolve().parents[1]


def _pin(cores: list[int]) -> None:
    try:
        os.sched_setaffinity(0, cores)
    except (AttributeError, OSError):
        pass


def worker(args) -> None:
    """One process of a configuration: prints 'RESULT {json}'."""
    import numpy as np
    import torch

    import ndflow as tf
    import ndflow.distribute.horovod as hvd
    from ndflow.distribute import collective
    from ndflow.models.image.cifar10 import cifar10

    hvd.init()
    if args.pin and args.threads:
        _pin(list(range(args.threads)) if hvd.size() == 1 else [hvd.local_rank()])
    if args.threads:   # 0: the default count, as a user's script leaves it
        torch.set_num_threads(args.threads)
    v1 = tf.compat.v1
    rng = np.random.RandomState(hvd.rank())
    with tf.Graph().as_default():
        images = v1.placeholder(tf.float32, [args.batch, 24, 24, 3])
        labels = v1.placeholder(tf.int32, [args.batch])
        total_loss = cifar10.loss(cifar10.inference(images), labels)
        opt = v1.train.GradientDescentOptimizer(0.01)
        if hvd.size() > 1:
            opt = hvd.DistributedOptimizer(opt)
        train = opt.minimize(total_loss)
        init = v1.global_variables_initializer()
        bcast = hvd.broadcast_global_variables(0) if hvd.size() > 1 else None
        shapes = [v.shape.as_list() for v in v1.trainable_variables()]
        feed = {images: rng.rand(args.batch, 24, 24, 3).astype(np.float32),
                labels: rng.randint(0, 10, args.batch).astype(np.int32)}
        with v1.Session() as sess:
            sess.run(init)
            if bcast is not None:
                sess.run(bcast)
            for _ in range(args.warmup):
                sess.run(train, feed)
            windows, cpu = [], []
            for _ in range(args.rounds):
                collective.barrier()
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(args.steps):
                    sess.run(train, feed)
                windows.append((time.perf_counter() - t0) / args.steps)
                cpu.append((time.process_time() - c0) / args.steps)
    result = {"rank": hvd.rank(), "size": hvd.size(), "threads": args.threads,
              "step_s": min(windows), "cpu_s": min(cpu),
              "params": int(sum(np.prod(s) for s in shapes))}
    if hvd.size() > 1:
        grads = [torch.randn(s) for s in shapes]
        for _ in range(3):
            collective.all_reduce(grads, op=collective.MEAN)
        collective.barrier()
        t0 = time.perf_counter()
        reps = 20
        for _ in range(reps):
            collective.all_reduce(grads, op=collective.MEAN)
        result["allreduce_s"] = (time.perf_counter() - t0) / reps
    print("RESULT " + json.dumps(result), flush=True)


def torch_worker(args) -> None:
    """The peer: the same network in PyTorch (NCHW), trained with DistributedDataParallel over
    gloo when the launcher started several processes. Prints 'RESULT {json}'."""
    import torch
    import torch.distributed as dist
    from torch import nn

    size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if args.pin:
        _pin(list(range(args.threads)) if size == 1 else [int(os.environ["LOCAL_RANK"])])
    torch.set_num_threads(args.threads)
    torch.manual_seed(rank)
    lrn = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)  # TF's depth_radius 4
    net = nn.Sequential(
        nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, padding=1), lrn,
        nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(), lrn, nn.MaxPool2d(3, 2, padding=1),
        nn.Flatten(), nn.Linear(6 * 6 * 64, 384), nn.ReLU(), nn.Linear(384, 192), nn.ReLU(),
        nn.Linear(192, 10))
    if size > 1:
        dist.init_process_group("gloo")
        net = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, weight_decay=0.004)
    x = torch.rand(args.batch, 3, 24, 24)
    y = torch.randint(0, 10, (args.batch,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    windows = []
    for _ in range(args.rounds):
        if size > 1:
            dist.barrier()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        windows.append((time.perf_counter() - t0) / args.steps)
    print("RESULT " + json.dumps({"rank": rank, "step_s": min(windows)}), flush=True)


def _run(cmd: list[str], passive: bool = True, extra: dict | None = None) -> list[dict]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TF_CONFIG")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if passive:
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.update(extra or {})
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    results = [json.loads(line.split("RESULT ", 1)[1]) for line in out.stdout.splitlines()
               if "RESULT " in line]
    if out.returncode != 0 or not results:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-pin", dest="pin", action="store_false")
    p.add_argument("--no-torch", dest="torch", action="store_false",
                   help="skip the PyTorch DistributedDataParallel peer")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    if args.torch_worker:
        torch_worker(args)
        return
    me = [sys.executable, str(Path(__file__).resolve()), "--worker", "--steps",
          str(args.steps), "--warmup", str(args.warmup), "--rounds", str(args.rounds),
          "--batch", str(args.batch)] + ([] if args.pin else ["--no-pin"])
    one_1t = _run(me + ["--threads", "1"])[0]
    one_2t = _run(me + ["--threads", "2"])[0]
    launch = [sys.executable, "-m", "ndflow.distribute.run", "-np", "2"]
    two = _run(launch + me + ["--threads", "1"])
    # issue 53: the launcher's workers as a user starts them (every core each, unpinned,
    # libgomp's default spin), with ndflow following the free cores and without
    two_default = _run(launch + me + ["--threads", "0"], passive=False)
    two_default_fixed = _run(launch + me + ["--threads", "0"], passive=False,
                             extra={"NDFLOW_FOLLOW_FREE_CORES": "0"})
    b = args.batch
    ips = {"1 process, 1 thread": b / one_1t["step_s"],
           "1 process, 2 threads": b / one_2t["step_s"],
           "2 processes x 1 thread": sum(b / r["step_s"] for r in two),
           "2 processes x default threads": sum(b / r["step_s"] for r in two_default),
           "  same, fixed thread count": sum(b / r["step_s"] for r in two_default_fixed)}
    print(cpu_line())
    print(f"CIFAR-10 model ({one_1t['params']:,} parameters), batch {b} per worker, "
          "TF1 Session + SGD")
    for name, value in ips.items():
        print(f"  {name:<30} {value:8.1f} images/s")
    for r in sorted(two, key=lambda r: r["rank"]):
        print(f"  worker {r['rank']}: {1 / r['step_s']:.2f} steps/s, all-reduce "
              f"{1000 * r['allreduce_s']:.2f} ms per step "
              f"({100 * r['allreduce_s'] / r['step_s']:.1f}% of the step)")
    # CPU-seconds per image: what the run costs whatever else shares the machine (a loaded
    # box distorts the wall-clock figures above; this shows the work data parallelism adds)
    cpu_one = one_1t["cpu_s"] / b
    cpu_two = sum(r["cpu_s"] for r in two) / (len(two) * b)
    print(f"  CPU-ms per image: 1 process {1000 * cpu_one:.2f}, 2 processes "
          f"{1000 * cpu_two:.2f} ({cpu_two / cpu_one:.2f}x: the all-reduce and gloo's threads)")
    speedup = ips["2 processes x 1 thread"] / ips["1 process, 1 thread"]
    print(f"  2 workers vs 1 worker (1 thread each): {speedup:.2f}x throughput, scaling "
          f"efficiency {100 * speedup / 2:.0f}% (bar: >= 1.6x) "
          f"{'PASS' if speedup >= 1.6 else 'BELOW BAR'}")
    print(f"  2 workers vs 1 process with 2 threads: "
          f"{ips['2 processes x 1 thread'] / ips['1 process, 2 threads']:.2f}x")
    if not args.torch:
        return
    peer = [a if a != "--worker" else "--torch-worker" for a in me]
    t_one = b / _run(peer + ["--threads", "1"])[0]["step_s"]
    t_two = sum(b / r["step_s"] for r in _run(
        [sys.executable, "-m", "ndflow.distribute.run", "-np", "2"] + peer + ["--threads", "1"]))
    print(f"PyTorch {torch_version()} DistributedDataParallel (gloo), same network: 1 process "
          f"{t_one:.1f} images/s, 2 processes {t_two:.1f} images/s ({t_two / t_one:.2f}x)")
    print(f"  ndflow / PyTorch throughput: 1 process {ips['1 process, 1 thread'] / t_one:.2f}x, "
          f"2 processes {ips['2 processes x 1 thread'] / t_two:.2f}x; scaling "
          f"{speedup:.2f}x vs {t_two / t_one:.2f}x")


def torch_version() -> str:
    import torch
    return torch.__version__.split("+")[0]


if __name__ == "__main__":
    main()
