"""Inference latency (batch 1) and throughput (batch 64) of the MNIST example's model and the
CIFAR-10 tutorial model: ndflow's graph mode, the SavedModel loaded back, ndflow's converted
model (tf.experimental.tensorrt.Converter: ONNX Runtime engine segments, FP32 and INT8
calibrated on the benchmark's images), ONNX Runtime on ndflow.onnx.export's model, and
TensorFlow (graph mode and its loaded SavedModel).

    python benchmarks/inference.py [--iters 200] [--rounds 2] [--tf PYTHON]

Both models are written once below with TensorFlow's ops, so the same source runs under
ndflow and under TensorFlow (`--worker MODULE`: `import MODULE as tf`); the parent makes the
weights and the images once, so every engine computes the same function on the same data
(each worker checks its outputs against the reference the parent stores). A figure is the
median over `iters` calls (batch 1) or `iters // 8` calls (batch 64), best of `rounds`
worker runs, the two interpreters alternating; the machine may be shared, so figures are
indicative.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SEED = 66478
MODELS = {
    # name: (input HWC, weight shapes)
    "mnist": ((28, 28, 1), [(5, 5, 1, 32), (32,), (5, 5, 32, 64), (64,), (3136, 512), (512,),
                            (512, 10), (10,)]),
    "cifar10": ((24, 24, 3), [(5, 5, 3, 64), (64,), (5, 5, 64, 64), (64,), (2304, 384),
                              (384,), (384, 192), (192,), (192, 10), (10,)]),
}


# -- the models (TensorFlow ops only: both interpreters run them) ----------------------------

def mnist_forward(tf, w, x):
    """ndflow/models/image/mnist/model.py's model, with a softmax on the logits."""
    for i in (0, 2):
        x = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w[i], 1, "SAME"), w[i + 1]))
        x = tf.nn.max_pool2d(x, 2, 2, "SAME")
    x = tf.reshape(x, [-1, 3136])
    x = tf.nn.relu(tf.matmul(x, w[4]) + w[5])
    return tf.nn.softmax(tf.matmul(x, w[6]) + w[7])


def cifar10_forward(tf, w, x):
    """ndflow/models/image/cifar10/cifar10.py's inference(), with a softmax on the logits."""
    x = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w[0], 1, "SAME"), w[1]))
    x = tf.nn.max_pool2d(x, 3, 2, "SAME")
    x = tf.nn.lrn(x, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    x = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w[2], 1, "SAME"), w[3]))
    x = tf.nn.lrn(x, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    x = tf.nn.max_pool2d(x, 3, 2, "SAME")
    x = tf.reshape(x, [-1, 2304])
    x = tf.nn.relu(tf.matmul(x, w[4]) + w[5])
    x = tf.nn.relu(tf.matmul(x, w[6]) + w[7])
    return tf.nn.softmax(tf.matmul(x, w[8]) + w[9])


FORWARD = {"mnist": mnist_forward, "cifar10": cifar10_forward}


# -- the worker --------------------------------------------------------------------------------

def _median_ms(fn, x, iters: int) -> float:
    fn(x)  # warm-up: tracing, plans, engine sessions
    fn(x)
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def _module(tf, name: str, weights: list):
    hwc = MODELS[name][0]
    module = tf.Module()
    module.w = [tf.Variable(a) for a in weights]
    forward = FORWARD[name]

    @tf.function(input_signature=[tf.TensorSpec((None,) + hwc, tf.float32, name="images")])
    def serve(images):
        return {"probs": forward(tf, module.w, images)}
    module.serve = serve
    return module


def _engines(tf, module, name: str, tmp: str, ndflow: bool, calibration,
             threads: int) -> dict:
    """name -> callable(np images) -> np probabilities."""
    path = os.path.join(tmp, f"{name}_{'ndflow' if ndflow else 'tf'}")
    tf.saved_model.save(module, path, signatures=module.serve.get_concrete_function())
    loaded = tf.saved_model.load(path).signatures["serving_default"]
    out = {"graph": lambda x: module.serve(x)["probs"].numpy(),
           "saved_model": lambda x: loaded(images=tf.constant(x))["probs"].numpy()}
    if ndflow:
        import onnxruntime as ort

        import ndflow.onnx
        converter = tf.experimental.tensorrt.Converter(input_saved_model_dir=path)
        converted = converter.convert()
        out["converted"] = lambda x: converted(images=tf.constant(x))["probs"].numpy()
        int8 = tf.experimental.tensorrt.Converter(input_saved_model_dir=path,
                                                  precision_mode="INT8")
        int8_fn = int8.convert(calibration_input_fn=lambda: iter([(calibration,)]))
        out["converted_int8"] = lambda x: int8_fn(images=tf.constant(x))["probs"].numpy()
        proto = ndflow.onnx.export(module.serve)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(proto.SerializeToString(), sess_options=options,
                                       providers=["CPUExecutionProvider"])
        out["onnxruntime"] = lambda x: session.run(None, {"images": x})[0]
    return out


def worker(module_name: str, data_path: str, iters: int, threads: int) -> dict:
    tf = __import__(module_name)
    if threads:  # every engine gets the same intra-op budget (ORT sessions: below)
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    d = np.load(data_path)
    result = {"version": tf.__version__, "figures": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (_, shapes) in MODELS.items():
            weights = [d[f"{name}_w{i}"] for i in range(len(shapes))]
            images, want = d[f"{name}_x"], d[f"{name}_probs"]
            engines = _engines(tf, _module(tf, name, weights), name, tmp,
                               module_name != "tensorflow", images, threads)
            for engine, fn in engines.items():
                err = float(np.abs(fn(images) - want).max())
                if err > (0.05 if engine.endswith("int8") else 1e-4):  # int8 rounding
                    raise SystemExit(f"{module_name} {name} {engine}: outputs differ by {err}")
                result["figures"][f"{name}/{engine}"] = {
                    "b1_ms": _median_ms(fn, images[:1], iters),
                    "b64_ms": _median_ms(fn, images, max(iters // 8, 3))}
    return result


# -- the parent ----------------------------------------------------------------------------------

def make_data(path: str) -> None:
    """Weights (uniform, Glorot-scaled), 64 images per model, and the reference
    probabilities (NumPy-free of any engine: computed by ndflow eagerly)."""
    import ndflow as tf

    rng = np.random.default_rng(SEED)
    arrays = {}
    for name, (hwc, shapes) in MODELS.items():
        weights = []
        for shape in shapes:
            if len(shape) == 1:
                w = rng.uniform(0, 0.1, shape)
            else:
                fan_in = int(np.prod(shape[:-1]))
                w = rng.uniform(-1, 1, shape) * np.sqrt(3 / fan_in)
            weights.append(w.astype(np.float32))
        x = rng.uniform(0, 1, (64,) + hwc).astype(np.float32)
        arrays.update({f"{name}_w{i}": w for i, w in enumerate(weights)})
        arrays[f"{name}_x"] = x
        arrays[f"{name}_probs"] = FORWARD[name](tf, [tf.constant(w) for w in weights],
                                                tf.constant(x)).numpy()
    np.savez(path, **arrays)


def run_worker(python: str, module: str, data_path: str, iters: int,
               threads: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, data_path,
                          "--iters", str(iters), "--threads", str(threads)],
                         capture_output=True, text=True, env=env,
                         timeout=1800, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list) -> dict:
    best: dict = {}
    for r in runs:
        for key, fig in (r or {}).get("figures", {}).items():
            b = best.setdefault(key, dict(fig))
            for k, v in fig.items():
                b[k] = min(b[k], v)
    return best


def report(ours: dict, theirs: dict, tf_version: str | None) -> None:
    print("model    engine                      batch 1 ms   batch 64 img/s   "
          "b1 vs TF graph   b64 vs TF graph")
    rows = [(k, "ndflow " + k.split("/")[1], v) for k, v in ours.items()]
    rows += [(k, f"TensorFlow {tf_version} " + k.split("/")[1], v) for k, v in theirs.items()]
    for key, label, fig in sorted(rows, key=lambda r: r[0]):
        model = key.split("/")[0]
        ref = theirs.get(f"{model}/graph")
        ratio = ""
        if ref:  # > 1 = slower than TensorFlow's graph mode
            ratio = f"{fig['b1_ms'] / ref['b1_ms']:13.2f}x  {fig['b64_ms'] / ref['b64_ms']:15.2f}x"
        print(f"{model:8s} {label:27s} {fig['b1_ms']:10.3f} {64000 / fig['b64_ms']:14.0f}   "
              f"{ratio}")
    if not theirs:
        print("TensorFlow: not available")
    print("(ratios are time ratios: below 1x is faster than TensorFlow's graph mode)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200, help="timed calls at batch 1")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each worker, alternating")
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--threads", type=int, default=0,
                    help="intra-op threads for every engine (0: each library's default); "
                         "1 gives stable figures on a shared machine")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.iters, args.threads)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line() + (f"; {args.threads} intra-op thread(s) per engine" if args.threads
                        else ""))
    have_tf = os.path.exists(args.tf)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        make_data(path)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", path, args.iters, args.threads))
            if have_tf:
                theirs.append(run_worker(args.tf, "tensorflow", path, args.iters,
                                         args.threads))
    if not any(ours):
        sys.exit("the ndflow run failed")
    tf_version = next((t["version"] for t in theirs if t), None)
    report(_best(ours), _best(theirs), tf_version)


if __name__ == "__main__":
    main()
