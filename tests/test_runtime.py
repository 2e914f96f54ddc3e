"""Process-wide settings (the garbage collector's) are made by `tandem serve`'s app factory once
its gateway has started, never by `create_app` itself (router/runtime.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette

from router.app import create_app
from router.cli import CONFIG_ENV, serve_app
from router.runtime import GC_THRESHOLD
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
