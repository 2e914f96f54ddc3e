"""How many files an extension touches, shown by toy extensions built in a copy of the gateway:
a new strategy is its route settings (router/config/strategies.py) and its policy module
(router/policies/), two files, and the copy serves steps with it, in process, with its series
declared; a new API surface is its folder under router/surfaces/ (here two files), and the copy
serves it over HTTP. Each copy runs in its own interpreter (the test's own `router` stays as it is)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = shutil.ignore_patterns("__pycache__", "models", "data")


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    copy.mkdir()
    for package in ("router", "judge"):
        shutil.copytree(ROOT / package, copy / package, ignore=SKIPPED)
    # The judge's model and the privacy detectors' data are read, never changed: linked, not copied.
    for kept in ("judge/models", "router/privacy/data"):
        if (ROOT / kept).exists():
            (copy / kept).symlink_to(ROOT / kept, target_is_directory=True)
    return copy


def _changed(copy: Path) -> list[str]:
    """Files of the copy that differ from the gateway's own, or are new."""
    changed = []
    for path in sorted(copy.rglob("*.py")):
        relative = path.relative_to(copy)
        original = ROOT / relative
        if not original.exists() or original.read_bytes() != path.read_bytes():
            changed.append(relative.as_posix())
    return changed


# A route that sends a step to the cloud when the agent's last message is longer than a bound.
TOY_SETTINGS = """

# Built by router/policies/by_length.py.
class ByLengthRoute(RouteBase):
    strategy: Literal["by_length"]
    longer_than: int = Field(20, ge=0, description="characters of the last message past which the cloud answers")

    def reasons(self) -> Reasons:
        return ((Reason.TASK_ROUTED, BOTH),)
"""

TOY_POLICY = '''
"""By length: the cloud answers when the agent's last message is long."""

from __future__ import annotations

from router.config.strategies import ByLengthRoute
from router.policies.base import Builder, Decision, Reason, RouteBase, StepView
from router.protocol.text import text_of


class ByLengthPolicy:
    def __init__(self, settings: ByLengthRoute) -> None:
        self._longer_than = settings.longer_than

    async def decide(self, step: StepView) -> Decision:
        length = len(text_of(step.request.messages[-1].get("content")))
        return Decision("cloud" if length > self._longer_than else "edge", Reason.TASK_ROUTED, score=length)


BUILDS: dict[type[RouteBase], Builder] = {ByLengthRoute: ByLengthPolicy}
'''

DRIVE = """
import asyncio

from tests.inprocess import engine_settings, in_process


async def main() -> None:
    settings = engine_settings(routes={"tandem": {"strategy": "by_length", "longer_than": 10}})
    async with in_process(settings) as env:
        series = {"route": "tandem", "target": "cloud", "reason": "task_routed", "status": "ok"}
        before = env.engine.metrics.registry.get_sample_value("tandem_steps_total", series)
        short = await env.run(session="a", messages=[{"role": "user", "content": "hi"}])
        long = await env.run(session="b", messages=[{"role": "user", "content": "a rather longer request"}])
        await env.engine.tracker.recorder.flush()
        after = env.metric("tandem_steps_total", **series)
        print(short.facts.target, long.facts.target, len(env.edge.received), len(env.cloud.received), before, after)


asyncio.run(main())
"""


def test_a_new_strategy_is_two_files(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    strategies = copy / "router" / "config" / "strategies.py"
    text = strategies.read_text()
    union_end = "    | JudgeRoute\n)"
    assert union_end in text
    text = text.replace("\nRouteSettings: TypeAlias", TOY_SETTINGS + "\n\nRouteSettings: TypeAlias", 1)
    strategies.write_text(text.replace(union_end, "    | JudgeRoute\n    | ByLengthRoute\n)", 1))
    (copy / "router" / "policies" / "by_length.py").write_text(textwrap.dedent(TOY_POLICY).lstrip())

    assert _changed(copy) == ["router/config/strategies.py", "router/policies/by_length.py"]
    # The copy's router and judge first; the tests' helpers from the repository.
    env = {**os.environ, "PYTHONPATH": f"{copy}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-c", DRIVE], cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # The short step on the edge, the long one on the cloud; its series declared at zero from the
    # route's settings before any step, and counted.
    assert done.stdout.split() == ["edge", "cloud", "1", "1", "0.0", "1.0"]


# A surface that takes `{"model", "prompt"}` and answers `{"text"}`; its errors `{"problem"}`.
TOY_WIRE = """
\"\"\"The plain surface's wire types: a prompt in, a text out.\"\"\"

from __future__ import annotations

from typing import Any

import orjson

from router.errors import bad_request


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(body.get("prompt"), str):
        raise bad_request("prompt must be a string", param="prompt")
    return {"model": body.get("model"), "messages": [{"role": "user", "content": body["prompt"]}]}


def from_chat(answer: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
    return {"text": answer["choices"][0]["message"]["content"]}


def error_body(status: int, error: dict[str, Any]) -> bytes:
    return orjson.dumps({"problem": error["message"]})
"""

TOY_SURFACE = """
\"\"\"`POST /v1/plain`: a prompt in, a text out, through the chat step.\"\"\"

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.api.translated import Surface, serve
from router.protocol.prefix_translated import SurfaceSpec
from router.surfaces.plain.wire import error_body, from_chat, to_chat

SURFACE = Surface(SurfaceSpec("plain", to_chat), from_chat, lambda chat, step: lambda chunks: chunks, error_body)


async def plain(request: Request) -> Response:
    return await serve(request, SURFACE)


ROUTES = [("/plain", plain, ["POST"])]
"""

SERVE = """
import httpx

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

edge = FakeUpstream(name="edge", model="edge-model").start()
cloud = FakeUpstream(name="cloud", model="cloud-model").start()
settings = settings_for(edge.base_url, cloud.base_url, routes={"tandem": {"strategy": "edge"}})
server = GatewayServer(settings).start()
try:
    answer = httpx.post(server.url + "/v1/plain", json={"model": "tandem", "prompt": "hello"}, timeout=10)
    refused = httpx.post(server.url + "/s/run-1/plain", json={"model": "tandem", "prompt": 3}, timeout=10)
    sent = edge.received[-1].body["messages"]
    print(answer.status_code, bool(answer.json()["text"]), answer.headers["x-tandem-target"], sent[-1]["content"])
    print(refused.status_code, refused.json())
finally:
    server.stop()
    edge.stop()
    cloud.stop()
"""


def test_a_new_api_surface_is_its_own_folder(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    folder = copy / "router" / "surfaces" / "plain"
    folder.mkdir()
    (folder / "wire.py").write_text(textwrap.dedent(TOY_WIRE).lstrip())
    (folder / "__init__.py").write_text(textwrap.dedent(TOY_SURFACE).lstrip())

    assert _changed(copy) == ["router/surfaces/plain/__init__.py", "router/surfaces/plain/wire.py"]
    env = {**os.environ, "PYTHONPATH": f"{copy}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-c", SERVE], cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    served, refused = done.stdout.splitlines()
    # The prompt reached the edge as a chat message and came back as text, with the step's headers;
    # a bad prompt (under the session prefix too) got the surface's own 400.
    assert served == "200 True edge hello"
    assert refused == "400 {'problem': 'prompt must be a string'}"
