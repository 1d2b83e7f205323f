#!/bin/bash
# One call on a lent GPU machine (the workplace's `device` tool): the default test suite with
# the GPU present, then the two issue-11 benchmarks with --device gpu and the MNIST step's waits
# for the device (gpu_syncs.py), and with --slow the slow pass.  The machine's image has torch,
# triton and numba but not google-crc32c or pyfarmhash:
# carry them as wheels in .whl/ (the device tool's README says how); they are installed into
# the image's own Python, since the tests' subprocesses set PYTHONPATH themselves.  Logs land
# in $OUT (or /tmp/device_out).
#
#     bash benchmarks/device_check.sh [--slow]
set -u
OUT=${OUT:-/tmp/device_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl \
        || exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
python3 -c "import torch, triton, numba, numpy; print('torch', torch.__version__, 'triton',
triton.__version__, 'numba', numba.__version__, 'numpy', numpy.__version__,
torch.cuda.get_device_name())"
lscpu | grep -E "^Model name"
start=$(date +%s)
python3 -m ndflow.precompile --jobs 16 2>&1 | tail -2
echo "precompile: $(( $(date +%s) - start )) s"
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 16 tests -rfE \
    --junitxml="$OUT/junit.xml" > "$OUT/tests.log" 2>&1
echo "tests rc=$? after $(( $(date +%s) - start )) s"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -30
tail -3 "$OUT/tests.log"
timeout 100 python3 benchmarks/jit_mlp.py --device gpu --no-tf > "$OUT/jit_mlp.log" 2>&1
echo "jit_mlp rc=$?"; tail -14 "$OUT/jit_mlp.log"
timeout 100 python3 benchmarks/mnist_cnn.py --device gpu > "$OUT/mnist_cnn.log" 2>&1
echo "mnist_cnn rc=$?"; tail -16 "$OUT/mnist_cnn.log"
timeout 60 python3 benchmarks/gpu_syncs.py > "$OUT/gpu_syncs.log" 2>&1
echo "gpu_syncs rc=$?"; grep -E "^[A-Za-z]" "$OUT/gpu_syncs.log"
if [ "${1:-}" = "--slow" ]; then
    timeout 330 python3 -m pytest -p no:cacheprovider -n 16 -m slow tests -rfE --timeout=300 \
        -v -o console_output_style=classic --tb=short > "$OUT/slow.log" 2>&1
    echo "slow rc=$?"; grep -E "^(FAILED|ERROR)" "$OUT/slow.log" | head; tail -2 "$OUT/slow.log"
fi
echo "total $(( $(date +%s) - start )) s"
