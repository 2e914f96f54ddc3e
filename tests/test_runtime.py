"""Process-wide settings (the garbage collector's) are made by `tandem serve`'s app factory once
its gateway has started, never by `create_app` itself (router/runtime.py)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette

from router.app import create_app
from router.cli import CONFIG_ENV, serve_app
from router.runtime import GC_THRESHOLD, MALLOC_ENV, tune_malloc
from tests.gateway_server import settings_for

DEFAULT_THRESHOLD = (700, 10, 10)
UNREACHABLE = "http://127.0.0.1:9"


@pytest.fixture()
def plain_gc() -> Iterator[None]:
    """The interpreter's own GC settings for the test; the suite's afterwards."""
    before = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(*DEFAULT_THRESHOLD)
    yield
    gc.set_threshold(*before)


async def _started(app: Starlette) -> tuple[tuple[int, int, int], int]:
    """The GC threshold and frozen-object count while the app's lifespan has started it."""
    async with app.router.lifespan_context(app):
        return gc.get_threshold(), gc.get_freeze_count()


async def test_create_app_leaves_the_process_alone(plain_gc: None) -> None:
    threshold, frozen = await _started(create_app(settings_for(UNREACHABLE, UNREACHABLE)))
    assert threshold == DEFAULT_THRESHOLD and frozen == 0


async def test_tandem_serve_tunes_the_collector_once_started(
    plain_gc: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        f"  edge: {{base_url: {UNREACHABLE}/v1, model: e}}\n"
        f"  cloud: {{base_url: {UNREACHABLE}/v1, model: c}}\n"
    )
    monkeypatch.setenv(CONFIG_ENV, str(config))
    app = serve_app()  # what each `tandem serve` worker builds
    assert gc.get_threshold() == DEFAULT_THRESHOLD  # not before its gateway has started
    threshold, frozen = await _started(app)
    assert threshold == GC_THRESHOLD and frozen > 0
    gc.unfreeze()


# A step's large buffers, as a long run makes them: several copies of a 400 KB body held at once,
# then freed. Minor page faults counted over the loop, in a fresh interpreter.
_FAULTS = """
import resource, sys
if sys.argv[1] == "tuned":
    from router.runtime import tune_malloc
    assert tune_malloc()
def step():
    held = [bytes(400_000) + bytes([n]) for n in range(8)]
    return sum(len(b) for b in held)
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    root = Path(__file__).resolve().parents[1]
    # glibc's own defaults, whatever the environment running the tests sets.
    run_env = {name: value for name, value in os.environ.items() if name not in MALLOC_ENV}
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS, mode], cwd=root, env=run_env, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def test_fixed_malloc_thresholds_stop_refaulting_large_buffers() -> None:
    # glibc's default returns the freed 3.2 MB to the system each time: ~800 pages faulted again
    # per step. With the thresholds fixed, the heap keeps them.
    plain, tuned = _faults("plain"), _faults("tuned")
    assert plain > 50 * 500, plain
    assert tuned < plain / 20, (tuned, plain)


def test_an_operators_malloc_environment_stands() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MALLOC_TRIM_THRESHOLD_", "1048576")
        assert tune_malloc() is False
