#!/usr/bin/env bash
# Every check that needs a CUDA GPU, in one run: the reference of every exercise graded on
# the GPU (TFLOPS, bandwidth and the other GPU figures print under each), then the
# meta-tests that only a GPU can run (each GPU-only mutant, wrong in a way only a run shows,
# must fail there with its property named). Prints how long each part took.
#
# Run from the project root, in the venv of the README's test command, on a machine where
# torch.cuda.is_available() and nvcc are both true:  bash benchmarks/gpu_checks.sh
set -uo pipefail

python - <<'EOF' || { echo "gpu_checks: no CUDA GPU visible to torch; nothing to run" >&2; exit 2; }
import sys
import torch
sys.exit(0 if torch.cuda.is_available() else 1)
EOF
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
command -v nvcc >/dev/null && nvcc --version | tail -1 || echo "nvcc: not found (C++ tracks skip)"

status=0
start=$SECONDS
python benchmarks/bench_graders.py --device cuda --runs 1 || status=1
echo "references on the GPU: $((SECONDS - start)) s"

start=$SECONDS
pytest -q -p no:cacheprovider tests/exercises -k gpu || status=1
echo "GPU meta-tests: $((SECONDS - start)) s"
exit $status
