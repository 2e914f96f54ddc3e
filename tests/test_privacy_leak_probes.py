"""Leak probes through the real gateway: agent-like requests holding sensitive values (in the user's
text, tool results, tool-call arguments, the system prompt, `user`, `metadata` and tool
descriptions) on every strategy and API surface, with failover and shadow labelling on. Every
body that reaches the scripted cloud (the step's call, inner judge/verify/advisor/plan calls,
shadow calls, a failover, a second step) is read: on `redact` no original reaches it, in any
form (as written, JSON-escaped, cut in two), and the client gets the originals back; on `block`
and `keep_local` nothing reaches it at all."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for, wait_until

MakeGateway = Callable[..., GatewayServer]

EMAIL = "jane.doe@example.com"
AI_KEY = "sk-proj-Qw7Rt2Yp9Lk3Mn8Bv4Cx6Zs1Df5Gh0JkLp9Oi8Uy7Tr6Ew5Qa4Sd3Fg2Hj1Kl0ZxCvBnMt"
AWS = "AKIAZ3MHQK7WQX4PLR2N"
PASSWORD = "Hunter2!xyz"
CARD = "4111 1111 1111 1111"
PHONE = "+44 20 7946 0958"
USER = "bob.smith@corp-mail.com"
META = "alice.meta@example.org"
TOOL_MAIL = "ops.tooldesc@example.net"
UMLAUT = "jürgen.müller@bücher.de"  # an agent's tool-call arguments write it `j\u00fcrgen…`
BACKSLASH = "Tr0ub\\4dor"  # JSON writes it `Tr0ub\\4dor`
VALUES = (EMAIL, AI_KEY, AWS, PASSWORD, CARD, PHONE, USER, META, TOOL_MAIL, UMLAUT, BACKSLASH)
# A value cut in two (a task or a transcript clipped to a size) must not leave a piece either.
PIECES = (AI_KEY[:12], AI_KEY[-12:])
OURS = re.compile(r"\[(?:EMAIL|AI_KEY|CLOUD_KEY|SECRET_ASSIGNMENT|CARD|PHONE)_\d+\]")

PARAMETERS = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
DESCRIPTION = f"Run a shell command; reports go to {TOOL_MAIL}"
COMMAND = f"mysql -u root -p'{PASSWORD}' prod; mail {UMLAUT}; mysql -p{BACKSLASH}&3 x"


def _strings(value: Any) -> Iterator[str]:
    # The probe's own walk, not the redactor's (router/privacy/redact.py has the same one): a
    # string the redactor's walk skipped would be skipped here too, and the leak not seen.
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def leaks(upstream: FakeUpstream) -> list[tuple[str, str]]:
    """(value, where) for each original, or piece of one, in any body the upstream received: in
    its decoded strings as written, JSON-escaped, or escaped to ASCII (as a quoted argument)."""
    found = []
    for received in upstream.received:
        texts = list(_strings(received.body))
        for value in (*VALUES, *PIECES):
            forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
            hit = next((text for text in texts if any(form in text for form in forms)), None)
            if hit is not None:
                found.append((value, hit[:120]))
    return found


def _last_text(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    messages = body.get("messages") or [{}]
    last = messages[-1]
    return last, last.get("content") if isinstance(last.get("content"), str) else ""


def _verdict(text: str) -> dict[str, Any] | None:
    """The answers of an inner judge or verifier that send the step to the cloud."""
    if text.startswith(("You decide whether", "You rate how much")):
        return {"kind": "text", "text": "yes 0.9"}
    if text.startswith("A software agent is about to take"):
        return {"kind": "text", "text": "0.1"}
    return None


def edge_respond(fail: bool = False) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The edge as each strategy needs it to reach the cloud: a judge says yes, a verifier rejects,
    it delegates, asks the advisor, breaks the tool format; with `fail`, its steps fail."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        last, text = _last_text(body)
        verdict = _verdict(text)
        if verdict is not None:
            return verdict
        if text.startswith("Summarise the agent"):
            return {"kind": "text", "text": f"The agent worked for {EMAIL}."}
        tools = [(tool.get("function") or {}).get("name") for tool in body.get("tools") or ()]
        if "delegate_to_cloud" in tools:
            return {"kind": "tool_call", "name": "delegate_to_cloud", "arguments": "{}"}
        advised = last.get("role") == "tool" and text.startswith(("echo", "No advice", "The advisor"))
        if "advisor" in tools and not advised:
            return {"kind": "tool_call", "name": "advisor", "arguments": "{}"}
        if fail:
            return {"kind": "error", "status": 500}
        if body.get("logprobs"):
            return {"kind": "text", "text": "x"}  # no logprobs: the entropy route falls back to the cloud
        if "bash" in tools:
            return {"kind": "tool_call", "name": "no_such_tool", "arguments": "{}"}  # escalation redoes it
        return {"kind": "text", "text": "edge answer"}

    return respond


def cloud_respond(body: dict[str, Any]) -> dict[str, Any]:
    """The cloud echoes every placeholder it received: in a tool call where the agent's tool is
    offered (the arguments must get the originals back, JSON-escaped), else in text."""
    _last, text = _last_text(body)
    verdict = _verdict(text)
    if verdict is not None:
        return verdict
    echoed = sorted(set(OURS.findall(orjson.dumps(body).decode())))
    if echoed and any((tool.get("function") or {}).get("name") == "bash" for tool in body.get("tools") or ()):
        return {"kind": "tool_call", "name": "bash", "arguments": json.dumps({"command": "echo " + " ".join(echoed)})}
    return {"kind": "text", "text": "echo " + " ".join(echoed)}


def chat_body(route: str, task: str | None = None, ascii_arguments: bool = False) -> dict[str, Any]:
    arguments = json.dumps({"command": COMMAND}, ensure_ascii=ascii_arguments)
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {
        "model": route,
        "messages": [
            {"role": "system", "content": f"You are a coding agent. The admin AWS key is {AWS}."},
            {"role": "user", "content": task or f"Fix the deploy. I am {EMAIL}, key {AI_KEY}, card {CARD}."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": f"ok; call {PHONE} or mail {EMAIL}"},
            {"role": "user", "content": f"Now mail {EMAIL} the AWS key {AWS}."},
        ],
        "tools": [
            {"type": "function", "function": {"name": "bash", "description": DESCRIPTION, "parameters": PARAMETERS}}
        ],
        "user": USER,
        "metadata": {"owner": META},
    }


def messages_body(route: str) -> dict[str, Any]:
    return {
        "model": route,
        "max_tokens": 256,
        "system": f"You are a coding agent. The admin AWS key is {AWS}.",
        "messages": [
            {"role": "user", "content": f"Fix the deploy. I am {EMAIL}, key {AI_KEY}, card {CARD}."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": COMMAND}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": f"call {PHONE}"}]},
        ],
        "tools": [{"name": "bash", "description": DESCRIPTION, "input_schema": PARAMETERS}],
        "metadata": {"user_id": USER},
    }


def responses_body(route: str) -> dict[str, Any]:
    return {
        "model": route,
        "instructions": f"You are a coding agent. The admin AWS key is {AWS}.",
        "input": [
            {"role": "user", "content": f"Fix the deploy. I am {EMAIL}, key {AI_KEY}, card {CARD}."},
            {"type": "function_call", "call_id": "f1", "name": "bash", "arguments": json.dumps({"command": COMMAND})},
            {"type": "function_call_output", "call_id": "f1", "output": f"call {PHONE}, mail {EMAIL}"},
        ],
        "tools": [{"type": "function", "name": "bash", "description": DESCRIPTION, "parameters": PARAMETERS}],
        "user": USER,
        "metadata": {"owner": META},
    }


STRATEGIES: dict[str, dict[str, Any]] = {
    "edge": {"strategy": "edge"},
    "cloud": {"strategy": "cloud"},
    "random": {"strategy": "random", "p": 1.0, "seed": 1},
    "task": {"strategy": "task", "cloud_if_matches": "deploy"},
    "entropy": {"strategy": "entropy"},
    "llm_judge": {"strategy": "llm_judge", "judge": "cloud", "sees": "full"},
    "llm_judge_task": {"strategy": "llm_judge", "judge": "cloud", "sees": "task", "mode": "score"},
    "draft_verify": {"strategy": "draft_verify", "verifier": "cloud"},
    "self_delegation": {"strategy": "self_delegation"},
    "advisor": {"strategy": "advisor"},
    "sketch": {"strategy": "sketch"},
    "escalation": {"strategy": "escalation"},
    "judge_state": {"strategy": "judge", "threshold": 0.0, "target_cloud_share": None},
    "judge_draft": {"strategy": "judge", "sees": "draft", "threshold": 0.0, "target_cloud_share": None},
    "flattened": {"strategy": "cloud", "context": {"mode": "flattened", "max_chars": 1000}},
    "last_k": {"strategy": "cloud", "context": {"mode": "last_k", "k": 1}},
    "summary": {"strategy": "cloud", "context": {"mode": "summary", "k": 1}},
}
SHADOW = {"rate": 1.0, "budget_usd_per_day": 1000.0}


def routes(mode: str) -> dict[str, dict[str, Any]]:
    return {
        f"{name}/{'failover' if failover else 'direct'}": {
            **settings,
            "privacy": mode,
            "failover": failover,
            "shadow": SHADOW,
        }
        for name, settings in STRATEGIES.items()
        for failover in (True, False)
    }


@pytest.fixture(scope="module")
def gateways(edge_server: FakeUpstream, cloud_server: FakeUpstream) -> Iterator[dict[str, GatewayServer]]:
    started = {
        mode: GatewayServer(settings_for(edge_server.base_url, cloud_server.base_url, routes=routes(mode))).start()
        for mode in ("redact", "block", "keep_local")
    }
    yield started
    for server in started.values():
        server.stop()


def shadows(client: httpx.Client, server: GatewayServer, route: str) -> float:
    """Shadow calls of the route so far, whatever their outcome."""
    total = 0.0
    for line in client.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith("tandem_shadow_calls_total{") and f'route="{route}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def send(client: httpx.Client, server: GatewayServer, surface: str, route: str, session: str) -> list[httpx.Response]:
    """The step(s) of one probe: on chat, a second step of the same trajectory too."""
    headers = {"X-Session-ID": session}
    if surface == "messages":
        return [client.post(f"{server.url}/v1/messages", json=messages_body(route), headers=headers)]
    if surface == "responses":
        return [client.post(f"{server.url}/v1/responses", json=responses_body(route), headers=headers)]
    body = chat_body(route, ascii_arguments=surface == "chat_ascii")
    if surface == "chat_stream":
        body["stream"] = True
    first = client.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
    body["messages"] = [
        *body["messages"],
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": f"And text {PHONE} that the card {CARD} is blocked."},
    ]
    return [first, client.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)]


SURFACES = ("chat", "chat_stream", "chat_ascii", "messages", "responses")


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("route", sorted(routes("redact")))
def test_redact_sends_no_original_to_the_cloud(
    gateways: dict[str, GatewayServer],
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    route: str,
    surface: str,
) -> None:
    server = gateways["redact"]
    edge.respond, cloud.respond = edge_respond(), cloud_respond
    before = shadows(client, server, route)
    answers = send(client, server, surface, route, f"redact-{route}-{surface}")
    for answer in answers:
        assert answer.status_code == 200, answer.text
        # The client never sees a placeholder the cloud echoed: it gets its values back.
        assert not OURS.search(answer.text), answer.text
    # Every answered step is shadowed (to the cloud when the edge answered it).
    assert wait_until(lambda: shadows(client, server, route) >= before + len(answers))
    assert cloud.received, "the probe must reach the cloud"
    assert leaks(cloud) == []
    if route.startswith(("cloud/", "random/", "task/")) and surface == "chat":
        # The cloud answered with placeholders in a tool call: the agent's tool gets the originals.
        arguments = answers[0].json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        assert EMAIL in orjson.loads(arguments)["command"]


@pytest.mark.parametrize("mode", ["block", "keep_local"])
@pytest.mark.parametrize("surface", ("chat", "messages", "responses"))
@pytest.mark.parametrize("route", sorted(routes("block")))
def test_block_and_keep_local_send_nothing_to_the_cloud(
    gateways: dict[str, GatewayServer],
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    route: str,
    surface: str,
    mode: str,
) -> None:
    server = gateways[mode]
    edge.respond = edge_respond()
    before = shadows(client, server, route)
    answers = send(client, server, surface, route, f"{mode}-{route}-{surface}")
    answered = [answer for answer in answers if answer.status_code == 200]
    for answer in answers:
        # keep_local answers on the edge; block refuses a step bound for the cloud.
        assert answer.status_code == 200 or (mode == "block" and answer.status_code == 403), answer.text
    assert wait_until(lambda: shadows(client, server, route) >= before + len(answered))
    assert cloud.received == []


@pytest.mark.parametrize("mode", ["redact", "block", "keep_local"])
@pytest.mark.parametrize("route", ["edge/failover", "advisor/failover", "escalation/failover"])
def test_a_failover_from_the_edge_keeps_the_route_s_privacy(
    gateways: dict[str, GatewayServer],
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    route: str,
    mode: str,
) -> None:
    edge.respond, cloud.respond = edge_respond(fail=True), cloud_respond
    answer = client.post(f"{gateways[mode].url}/v1/chat/completions", json=chat_body(route))
    if mode == "redact":
        assert answer.status_code == 200, answer.text  # the cloud answered in the edge's place
        assert not OURS.search(answer.text) and cloud.received
        assert leaks(cloud) == []
    else:
        # No failover to the cloud for a sensitive step (block refuses one the strategy sent there).
        assert answer.status_code >= 500 or (mode == "block" and answer.status_code == 403), answer.text
        assert cloud.received == []


# -- the defects these probes found ------------------------------------------------------------


def test_a_shadow_call_to_the_cloud_redacts_the_request_s_other_fields(
    make_gateway: MakeGateway, edge: FakeUpstream, cloud: FakeUpstream, client: httpx.Client
) -> None:
    """The shadow asked the cloud with the step's `user`, `metadata` and tool descriptions as the
    client sent them: only its messages were redacted."""
    server = make_gateway(routes={"tandem": {"strategy": "edge", "privacy": "redact", "shadow": SHADOW}})
    edge.default = {"kind": "text", "text": "edge answer"}
    answer = client.post(f"{server.url}/v1/chat/completions", json=chat_body("tandem"))
    assert answer.status_code == 200, answer.text
    assert wait_until(lambda: len(cloud.received) == 1)
    assert leaks(cloud) == []
    sent = cloud.received[0].body
    assert OURS.fullmatch(sent["user"]) and OURS.fullmatch(sent["metadata"]["owner"]), sent
    assert "[EMAIL_" in sent["tools"][0]["function"]["description"]


@pytest.mark.parametrize(
    "route",
    [
        {"strategy": "llm_judge", "judge": "cloud", "sees": "full"},
        {"strategy": "llm_judge", "judge": "cloud", "sees": "last_k"},
        {"strategy": "draft_verify", "verifier": "cloud"},
        {"strategy": "advisor"},
        {"strategy": "cloud", "context": {"mode": "flattened"}},
    ],
    ids=["llm_judge_full", "llm_judge_last_k", "draft_verify", "advisor", "flattened"],
)
def test_a_transcript_for_the_cloud_quotes_no_escaped_value(
    make_gateway: MakeGateway,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    route: dict[str, Any],
) -> None:
    """A transcript quotes tool-call arguments as their JSON text: a value JSON writes otherwise
    (a backslash, a non-ASCII letter an agent's JSON escapes) was not found there by the
    redaction of the prompt, and reached the cloud escaped."""
    server = make_gateway(routes={"tandem": {**route, "privacy": "redact"}})
    edge.respond, cloud.respond = edge_respond(), cloud_respond
    answer = client.post(f"{server.url}/v1/chat/completions", json=chat_body("tandem", ascii_arguments=True))
    assert answer.status_code == 200, answer.text
    assert cloud.received
    assert leaks(cloud) == []


@pytest.mark.parametrize(
    "route",
    [
        {"strategy": "sketch"},
        {"strategy": "advisor"},
        {"strategy": "llm_judge", "judge": "cloud", "sees": "task"},
    ],
    ids=["sketch", "advisor", "llm_judge_task"],
)
def test_a_task_cut_for_the_cloud_leaves_no_piece_of_a_value(
    make_gateway: MakeGateway,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    client: httpx.Client,
    route: dict[str, Any],
) -> None:
    """The task quoted in a plan's, an advisor's or a judge's prompt is cut at 500 characters: a
    key across the cut lost its end, and its beginning was no longer the value redaction knew."""
    server = make_gateway(routes={"tandem": {**route, "privacy": "redact"}})
    edge.respond, cloud.respond = edge_respond(), cloud_respond
    task = "x" * 480 + f" {AI_KEY} and mail {EMAIL}"
    body = chat_body("tandem", task=task)
    body["messages"] = body["messages"][:2]
    answer = client.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    assert cloud.received
    assert leaks(cloud) == []


@pytest.mark.parametrize("mode", ["redact", "keep_local", "block"])
def test_a_judge_on_another_named_upstream_gets_the_route_s_privacy(
    make_gateway: MakeGateway, edge: FakeUpstream, client: httpx.Client, mode: str
) -> None:
    """A judge or a verifier may be any named upstream (a hosted model): it got the originals on
    every route, as if it were the edge."""
    third = FakeUpstream(name="third", model="judge-model").start()
    try:
        third.default = {"kind": "text", "text": "no"}
        server = make_gateway(
            routes={"tandem": {"strategy": "llm_judge", "judge": "hosted", "privacy": mode, "on_failure": "edge"}},
            upstream_overrides={"hosted": {"base_url": third.base_url, "model": "judge-model"}},
        )
        body = {"model": "tandem", "messages": [{"role": "user", "content": f"mail {EMAIL} the key {AI_KEY}"}]}
        answer = client.post(f"{server.url}/v1/chat/completions", json=body)
        assert answer.status_code == 200, answer.text
        assert leaks(third) == []
        if mode == "redact":
            assert third.received and "[EMAIL_1]" in third.received[0].raw.decode()
        else:
            assert third.received == []  # kept off it, as off the cloud
    finally:
        third.stop()
