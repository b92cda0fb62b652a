#!/usr/bin/env bash
# What a session lent a GPU runs (the device tool; run from the repository root, $OUT collects
# the logs): the real-GPU tests, every oracle test's device pass on real cupy instead of the
# strict stand-in (AGRAD_REAL_CUDA=1), the three realistic steps beside torch CUDA, and two
# bundled configs trained on the GPU. Each part has its own time limit; SIGINT lets pytest print
# its summary when one runs out.
set -u
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import sys, numpy, cupy, torch; print(sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)"
python3 -c "import autogradcli as ag; print('cuDNN through cupy:', ag.backends.cudnn.version())"
ORACLES=${ORACLES:-$(grep -l "from oracle import\|from module_oracle import\|import oracle" tests/test_*.py)}
part() { echo "=== $1 ($(date +%T))"; }

part "real-GPU tests"
timeout -s INT "${T_TESTS:-90}" python3 -m pytest -p no:cacheprovider -q -n 8 --tb=short \
  tests/test_cuda.py tests/test_distributed_nccl.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -25

part "oracle device pass on real cupy"
[ -n "${SKIP_ORACLE:-}" ] || AGRAD_REAL_CUDA=1 timeout -s INT "${T_ORACLE:-200}" python3 -m pytest -p no:cacheprovider -q \
  -n "${WORKERS:-12}" --tb=line -o addopts="" $ORACLES 2>&1 | tee "$OUT/oracle_cuda.log" | tail -60

part "realistic steps beside torch CUDA"
timeout -s INT "${T_BENCH:-150}" python3 bench/bench_models.py --device cuda --rounds "${ROUNDS:-20}" \
  2>&1 | tee "$OUT/bench_cuda.log" | grep -v "^$"

if [ -n "${PROFILE:-}" ]; then
  part "profiles of our steps on the GPU"
  timeout -s INT 120 python3 bench/bench_models.py --device cuda --profile --rounds 10 2>&1 \
    | tee "$OUT/profile_cuda.log" | grep -E "^\||ms/step|tottime|^ +[0-9]" | head -150
fi

part "bundled configs on the GPU"
for cfg in ${CONFIGS-char_gpt digits_cnn}; do
  timeout -s INT 60 python3 -m autogradcli.cli train "configs/$cfg.yaml" --set device=cuda \
    --set train.epochs=1 --progress none 2>&1 | tee "$OUT/train_$cfg.log" | tail -12
done
part "done"
