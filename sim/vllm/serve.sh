#!/usr/bin/env bash
# Run vLLM's real OpenAI-compatible server on a CPU, offline, in the foreground.
#
#   sim/vllm/serve.sh [--model DIR] [--name NAME] [--port P] [--host H] [--run-dir DIR]
#                        [-- EXTRA_VLLM_ARGS...]
#
# Without --model it serves the tiny random model (built on first use, see make_tiny_model.py).
# --run-dir holds everything the server writes (caches, socket files, temp files); the default
# is kept between runs because a warm cache saves ~15 s of start-up.
# The script ends with `exec`, so its pid is the API server's: SIGTERM to it stops the server
# and its engine-core child cleanly in ~2 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_home="${XDG_CACHE_HOME:-$HOME/.cache}"
venv="${TANDEM_VLLM_VENV:-$cache_home/tandem/vllm-venv}"

model=""
name="tiny"
host="127.0.0.1"
port="8000"
run_dir="$cache_home/tandem/vllm-run"
while (($#)); do
    case "$1" in
        --model) model="$2"; shift 2 ;;
        --name) name="$2"; shift 2 ;;
        --host) host="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --run-dir) run_dir="$2"; shift 2 ;;
        --) shift; break ;;
        -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "serve.sh: unknown argument: $1 (vLLM's own flags go after --)" >&2; exit 2 ;;
    esac
done

bash "$here/install.sh"  # bash: a wheel may drop the file mode
if [[ -z "$model" ]]; then
    model="${TANDEM_TINY_MODEL_DIR:-$cache_home/tandem/tiny-model}"
    "$venv/bin/python" "$here/make_tiny_model.py" "$model"
fi

mkdir -p "$run_dir/tmp" "$run_dir/cache" "$run_dir/config"
run_dir="$(cd "$run_dir" && pwd)"

# The engine sizes its KV cache from --kv-cache-memory-bytes; this variable would override it.
unset VLLM_CPU_KVCACHE_SPACE
export VLLM_TARGET_DEVICE=cpu
# No hub, no telemetry: the model is local and the machine may have no network.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
# Without this the first logprobs request compiles for ~24 s.
export TORCHDYNAMO_DISABLE=1
# Only vLLM's offline engine honours this: the API server always runs its engine core as a child
# process ("VLLM::EngineCore", ~650 MB of the ~1.2 GB). Set anyway, as in the checked recipe.
export VLLM_ENABLE_V1_MULTIPROCESSING=0
# Everything the server writes stays in the run folder (vLLM leaves socket files in TMPDIR).
export TMPDIR="$run_dir/tmp"
export XDG_CACHE_HOME="$run_dir/cache"
export VLLM_CACHE_ROOT="$run_dir/cache/vllm"
export TORCHINDUCTOR_CACHE_DIR="$run_dir/cache/torchinductor"
export HF_HOME="$run_dir/cache/huggingface"
export VLLM_CONFIG_ROOT="$run_dir/config/vllm"

# `vllm serve` fails: the distribution is named vllm-cpu, so run the module instead.
exec "$venv/bin/python" -m vllm.entrypoints.openai.api_server \
    --model "$model" \
    --served-model-name "$name" \
    --host "$host" \
    --port "$port" \
    --dtype float32 \
    --max-model-len 2048 \
    --enforce-eager \
    --kv-cache-memory-bytes 64M \
    --enable-auto-tool-choice \
    --tool-call-parser hermes \
    "$@"
