"""Fixtures for tests against a real vLLM server (CPU, tiny random model).

The server starts once per test session (~30 s). The first run on a machine also installs vLLM
(a few minutes); that happens once collection is done, before any test runs, so it does not
count against a test's timeout. Deselect these tests with ``-m "not vllm"``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.vllm_edge import (
    READY_TIMEOUT_S,
    VLLMServer,
    VLLMServerError,
    ensure_tiny_model,
    ensure_venv,
)

_HERE = Path(__file__).resolve().parent
# Room for the session's server start (at most READY_TIMEOUT_S) in whichever test comes first.
_TEST_TIMEOUT_S = READY_TIMEOUT_S + 60
_setup_error = pytest.StashKey[VLLMServerError]()


def _in_this_folder(item: pytest.Item) -> bool:
    return _HERE in item.path.parents


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vllm: needs the real vLLM CPU server (slow the first time)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    has_timeout_plugin = config.pluginmanager.hasplugin("timeout")
    for item in items:
        if _in_this_folder(item):
            item.add_marker(pytest.mark.vllm)
            if has_timeout_plugin and item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(_TEST_TIMEOUT_S))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install vLLM and build the tiny model when a selected test needs them."""
    if session.config.option.collectonly or not any(_in_this_folder(item) for item in session.items):
        return
    print("\n[vllm] checking the vLLM install and the tiny model (first run: minutes)", file=sys.stderr)
    try:
        ensure_venv()
        ensure_tiny_model()
    except VLLMServerError as error:
        # Raised here it would abort the whole run; each vLLM test reports it instead.
        session.config.stash[_setup_error] = error


@pytest.fixture(scope="session")
def vllm_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """A running vLLM server; caches, sockets and its log live in this session's tmp folder."""
    setup_error = request.config.stash.get(_setup_error, None)
    if setup_error is not None:
        raise setup_error
    with VLLMServer(tmp_path_factory.mktemp("vllm-run")) as server:
        yield server
