#!/usr/bin/env bash
# The GPU feed's measurements on a lent device machine (../shared/TESTBEDS.md: Python 3.12 with torch, torchvision,
# NumPy, OpenCV, Pillow, protobuf; no simplejpeg, google-crc32c): one run of `benchmarks/gpu_feed.py`'s two parts,
# its tables written under $OUT. Here first: `bash benchmarks/gpu_feed_device.sh wheels` puts the cp312 wheels
# parafeed needs in .device-wheels/ (carry it: `run(carry=[".device-wheels"], ...)`); there:
# `bash benchmarks/gpu_feed_device.sh` (about 8 minutes with the defaults below).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = wheels ]; then
    python3 -m pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 --no-deps \
        simplejpeg google-crc32c cloudpickle ml_dtypes tqdm -d .device-wheels
    exit
fi
OUT=${OUT:-/tmp/gpu-feed}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/pf-deps .device-wheels/*.whl
PYTHONPATH=/tmp/pf-deps python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/pf .
export PYTHONPATH=/tmp/pf:/tmp/pf-deps
FEED=(--device cuda --batch 256 --photos 4000 --shards 16 --runs "${RUNS:-1}" --warmup 5 --seconds 10
      --data /tmp/gpu-feed-data --no-save)
DEFAULT='parafeed default (AUTOTUNE, no executor)'
THREADS='parafeed default, threads first (autotune.executor="thread")'
PROCESS='parafeed map(executor="process")'
OFFLOAD='parafeed offload(executor="process")'
# (the batches right, and from where; a failed check is written down and the tables still run: one lease is all)
python3 benchmarks/gpu_feed.py --check --device cuda 2>&1 | tee "$OUT/check.md" \
    || echo "check failed: $?" | tee -a "$OUT/check.md"
# (the rows with the map's input fed from here were measured on the 2026-11-30 lease: docs/benchmarks.md#gpu-feed)
python3 benchmarks/gpu_feed.py "${FEED[@]}" --model resnet50 \
    --rows "free input;$DEFAULT;$THREADS;$PROCESS;$OFFLOAD;PyTorch DataLoader" 2>&1 | tee "$OUT/resnet50.md"
python3 benchmarks/gpu_feed.py "${FEED[@]}" --model none \
    --rows "bare threads;$DEFAULT;$THREADS;$PROCESS;$OFFLOAD;parafeed default, to_jax();PyTorch DataLoader" 2>&1 \
    | tee "$OUT/cpu-per-image.md"
python3 benchmarks/gpu_feed.py "${FEED[@]}" --model resnet18 \
    --rows "free input;$DEFAULT;$PROCESS;PyTorch DataLoader" 2>&1 | tee "$OUT/resnet18.md"
