#!/usr/bin/env bash
# Install the real agent clients the client tests drive (deploy/clients/versions.txt), each in a
# folder of its own outside the clone, so fresh clones reuse them:
#   ${TANDEM_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/clients}/<name>
#
#   deploy/clients/install.sh          # all of them; idempotent (a stamp per client)
#   deploy/clients/install.sh codex    # only the ones named
#
# Python clients get a Python 3.12 virtualenv (OpenHands SDK and harbor require >= 3.12);
# npm clients an npm prefix (the package ships its native binary). Prints the time each took.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${TANDEM_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem/clients}"
log() { printf '[clients-install] %s\n' "$*" >&2; }

python312() {
    local candidate
    # pyenv's shim is on the PATH but fails unless 3.12 is selected: try each one for real.
    for candidate in "${TANDEM_PYTHON312:-}" "$HOME"/.pyenv/versions/3.12*/bin/python3.12 "$(command -v python3.12 || true)"; do
        if [[ -n "$candidate" && -x "$candidate" ]] && "$candidate" -c '' 2>/dev/null; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    log "no Python 3.12 found (set TANDEM_PYTHON312, or install it: pyenv install 3.12)"
    return 1
}

install_one() {
    local kind="$1" name="$2"
    shift 2
    local dir="$root/$name" stamp
    stamp="$(printf '%s %s %s\n' "$kind" "$name" "$*" | sha256sum | cut -d' ' -f1)"
    if [[ -f "$dir/.tandem-installed" && "$(cat "$dir/.tandem-installed")" == "$stamp" ]]; then
        log "$name: up to date ($dir)"
        return 0
    fi
    mkdir -p "$root"
    exec 9>"$dir.lock"
    flock 9
    if [[ -f "$dir/.tandem-installed" && "$(cat "$dir/.tandem-installed")" == "$stamp" ]]; then
        return 0
    fi
    local started=$SECONDS
    rm -rf "$dir"
    if [[ "$kind" == python ]]; then
        "$(python312)" -m venv "$dir"
        # (pip's notes about find-links folders this machine lacks are left out of the log)
        "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --progress-bar off "$@" \
            2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    else
        command -v npm >/dev/null || { log "npm is missing (make clients installs nodejs)"; return 1; }
        mkdir -p "$dir"
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$@"
    fi
    printf '%s\n' "$stamp" >"$dir/.tandem-installed"
    log "$name: installed in $((SECONDS - started)) s ($dir)"
}

wanted=" $* "
while read -r kind name spec; do
    [[ -z "$kind" || "$kind" == \#* ]] && continue
    if [[ $# -gt 0 && "$wanted" != *" $name "* ]]; then
        continue
    fi
    # shellcheck disable=SC2086  # a spec is several requirements
    install_one "$kind" "$name" $spec
done <"$here/versions.txt"
