"""How each gateway under test is installed, configured and started.

Both gateways get the same two model names: `fast` relays to the upstream that answers at once,
`slow` to the one that answers after 100 ms. Both check a client key, run one worker and log
only errors, so that neither does work the other skips.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# Newer releases' `proxy` extra needs `litellm-proxy`, which the package index here does not
# have (pip backtracks to this release by itself); pinned so that figures compare across turns.
LITELLM_SPEC = os.environ.get("TANDEM_BENCH_LITELLM_SPEC", "litellm[proxy]==1.108.7")
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True, slots=True)
class Upstreams:
    fast_port: int
    slow_port: int


def bench_key() -> str:
    # LiteLLM refuses to start with a weak master key; a fresh random one per run satisfies it.
    return "sk-bench-" + secrets.token_hex(24)


def _base_env() -> dict[str, str]:
    """The caller's environment without settings that would reconfigure a gateway under test."""
    dropped = ("TANDEM_", "LITELLM_", "OPENAI_", "DATABASE_URL", "REDIS_", "HTTP_PROXY", "HTTPS_PROXY")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(dropped)}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


# -- Tandem --------------------------------------------------------------------------------------


def tandem_config(path: Path, upstreams: Upstreams, key: str, routes: dict[str, Any] | None = None) -> Path:
    """The overhead benchmark's gateway config; `routes`: more routes beside `fast` and `slow`."""
    config: dict[str, Any] = {
        "log_level": "warning",
        "client_api_keys": [key],
        "upstreams": {
            "edge": {
                "base_url": f"http://127.0.0.1:{upstreams.fast_port}/v1",
                "model": "fake-model",
                "prices": {"input": 0.10, "output": 0.15},
            },
            "cloud": {
                "base_url": f"http://127.0.0.1:{upstreams.slow_port}/v1",
                "model": "fake-model",
                "prices": {"input": 2.50, "cached_input": 0.25, "output": 15.00},
            },
        },
        "routes": {"fast": {"strategy": "edge"}, "slow": {"strategy": "cloud"}, **(routes or {})},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def tandem_command(config: Path, port: int) -> tuple[list[str], dict[str, str]]:
    # The `tandem` script of the interpreter running the benchmark (the project's virtualenv).
    script = Path(sys.executable).parent / "tandem"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "router.cli"]
    command += [
        "serve",
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]
    return command, _base_env()


# -- LiteLLM -------------------------------------------------------------------------------------


class LiteLLMUnavailable(Exception):
    """LiteLLM's proxy could not be installed or started; the message says why."""


def litellm_venv() -> Path:
    """Outside the clone, so that every clone and worktree reuses one install."""
    override = os.environ.get("TANDEM_BENCH_LITELLM_VENV")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    version = LITELLM_SPEC.rpartition("==")[2] or "latest"
    return cache / "tandem" / f"litellm-venv-{version}"


def ensure_litellm(log_path: Path) -> Path:
    """The `litellm` command of its own virtualenv, installed on first use."""
    venv = litellm_venv()
    binary = venv / "bin" / "litellm"
    stamp = venv / ".tandem-installed"
    if stamp.is_file() and stamp.read_text() == LITELLM_SPEC and binary.exists():
        return binary
    venv.parent.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # Two benchmarks started at once must not install into one folder together.
    with (venv.parent / f"{venv.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and stamp.read_text() == LITELLM_SPEC and binary.exists():
            return binary
        print(f"installing {LITELLM_SPEC} into {venv} (once; log in {log_path}) ...", flush=True)
        base_python = getattr(sys, "_base_executable", sys.executable)
        steps = [
            [base_python, "-m", "venv", "--clear", str(venv)],
            [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "--quiet", LITELLM_SPEC],
        ]
        with log_path.open("wb") as log:
            for step in steps:
                try:
                    done = subprocess.run(step, stdout=log, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S)
                except subprocess.TimeoutExpired as exc:
                    raise LiteLLMUnavailable(f"`{' '.join(step)}` took over {INSTALL_TIMEOUT_S} s") from exc
                if done.returncode != 0:
                    tail = log_path.read_text(errors="replace").splitlines()[-5:]
                    raise LiteLLMUnavailable(f"`{' '.join(step)}` failed: " + " | ".join(tail))
        if not binary.exists():
            raise LiteLLMUnavailable(f"{LITELLM_SPEC} installed no `litellm` command in {venv}")
        stamp.write_text(LITELLM_SPEC)
    return binary


def litellm_config(path: Path, upstreams: Upstreams, key: str) -> Path:
    def entry(name: str, port: int) -> dict[str, object]:
        params = {
            # A model in LiteLLM's bundled price map: for a model it cannot price, LiteLLM runs
            # a zero-cost diagnostic on every answer (a fifth of its time at c=1), which would
            # measure a misconfiguration rather than the proxy. The fake answers any name.
            "model": "openai/gpt-4o-mini",
            "api_base": f"http://127.0.0.1:{port}/v1",
            "api_key": "sk-fake",
        }
        return {"model_name": name, "litellm_params": params}

    config = {
        "model_list": [entry("fast", upstreams.fast_port), entry("slow", upstreams.slow_port)],
        "litellm_settings": {
            "set_verbose": False,
            "json_logs": False,
            "telemetry": False,
            "turn_off_message_logging": True,
        },
        "general_settings": {"master_key": key, "disable_spend_logs": True, "disable_error_logs": True},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def litellm_command(binary: Path, config: Path, port: int) -> tuple[list[str], dict[str, str]]:
    command = [
        str(binary),
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--num_workers",
        "1",
    ]
    env = _base_env()
    env.update(
        {
            # Offline: the bundled model price map, no hub look-ups; only errors logged.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOG": "ERROR",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    return command, env
