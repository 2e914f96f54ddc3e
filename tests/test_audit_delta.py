"""The content audit log writes deltas: a cloud line carries only the messages its trajectory's
previous cloud line did not, every rotated file opens with snapshots so no line refers outside
it, and `tandem audit expand` rebuilds exactly what the cloud received. A 188-step all-cloud
run's audit stays within twice its transcript. Real gateway, scripted cloud."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from benchmarks.audit_size.workload import first_messages, tool_call, tool_result, transcript_bytes
from router.audit.sink import kept_files, rotated
from router.cli import main as tandem
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]


def run_agent(
    client: httpx.Client, server: GatewayServer, cloud: FakeUpstream, steps: int, session: str, stream_every: int = 0
) -> list[dict[str, Any]]:
    """An agent loop on the all-cloud route: each answer is a tool call, each result appended."""
    rng = random.Random(session)
    messages = first_messages()
    for index in range(steps):
        name, arguments = tool_call(rng)
        stream = bool(stream_every) and index % stream_every == 1
        cloud.push({"kind": "tool_call", "name": name, "arguments": arguments})
        response = client.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem/cloud", "messages": messages, "stream": stream},
            headers={"X-Session-ID": session},
        )
        assert response.status_code == 200, response.text
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
        messages = [
            *messages,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": tool_result(rng)},
        ]
    return messages


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def expanded(path: Path, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / "ec2.jsonl"
    assert tandem(["audit", "expand", str(path), "--out", str(out), *extra]) == 0
    return audit_lines(out)


def test_lines_are_deltas_and_expand_rebuilds_the_input(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(audit={"mode": "content", "path": str(path)})
    run_agent(client, server, cloud, 6, "delta", stream_every=2)
    # The client compacts its history: no longer an extension of the previous input.
    cloud.push({"text": "summary noted"})
    compacted = [{"role": "user", "content": "Summary of the work so far: the writer is fixed."}]
    client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem/cloud", "messages": compacted},
        headers={"X-Session-ID": "delta"},
    )
    server.stop()
    written = audit_lines(path)
    assert "input" in written[0] and "input_delta" not in written[0]
    for previous, line in itertools.pairwise(written[:6]):
        assert line["input_ref"] == previous["audit_id"] and "input" not in line
        assert len(line["input_delta"]) == 2  # the assistant's call and the tool's result
    assert written[6]["input"] == compacted  # not a prefix: written whole
    sent = [received.body["messages"] for received in cloud.received]
    rebuilt = expanded(path, tmp_path)
    assert [line["input"] for line in rebuilt] == sent
    first = rebuilt[0]
    assert set(first) >= {
        "timestamp",
        "model",
        "session_id",
        "decision",
        "prompt_tokens",
        "completion_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "latency_ms",
        "input",
        "output",
        "output_tool_calls",
        "n_redacted_tokens",
    }
    assert first["session_id"] == "delta" and first["decision"] == "cloud" and first["model"] == "cloud-model"
    assert rebuilt[1]["output_tool_calls"] and rebuilt[6]["output"] == "summary noted"


def test_every_rotated_file_stands_alone(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    # No backup: the first file is gone by the end, and what is kept still expands.
    server = make_gateway(audit={"mode": "content", "path": str(path), "max_bytes": 65536, "backups": 0})
    histories: dict[str, list[dict[str, Any]]] = {"rot-a": [], "rot-b": []}
    for index in range(45):
        for session, messages in histories.items():  # two open trajectories, interleaved
            messages.append({"role": "user" if not messages else "tool", "content": f"{session} result {index}"})
            cloud.push({"kind": "tool_call", "arguments": f'{{"command": "ls {index}"}}'})
            answer = client.post(
                f"{server.url}/v1/chat/completions",
                json={"model": "tandem/cloud", "messages": messages},
                headers={"X-Session-ID": session},
            )
            messages.append(answer.json()["choices"][0]["message"])
    server.stop()
    files = kept_files(path)
    assert files == [path] and not rotated(path, 1).exists()  # it rotated: the first file was deleted
    opening = audit_lines(path)[:2]
    assert [line.get("audit") for line in opening] == ["snapshot", "snapshot"]
    assert {line["trajectory_id"] for line in opening} == {"rot-a", "rot-b"}
    for file in files:
        ids = {line.get("audit_id") for line in audit_lines(file)}
        refs = [line["input_ref"] for line in audit_lines(file) if "input_ref" in line]
        assert refs and set(refs) <= ids, f"{file.name} refers to lines outside it"
    assert len(audit_lines(path)) < 90
    sent = {orjson.dumps(received.body["messages"]) for received in cloud.received}
    rebuilt = expanded(path, tmp_path)
    assert len(rebuilt) >= 10 and all(orjson.dumps(line["input"]) in sent for line in rebuilt)


def test_a_188_step_run_audits_within_twice_its_transcript(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    server = make_gateway(audit={"mode": "content", "path": str(path)})
    messages = run_agent(client, server, cloud, 188, "long-run")
    server.stop()
    transcript = transcript_bytes(messages)
    audit = path.stat().st_size
    full_history = sum(len(orjson.dumps(r.body["messages"])) for r in cloud.received)
    assert len(audit_lines(path)) == 188
    assert audit <= 2 * transcript, f"audit {audit} B, transcript {transcript} B"
    assert full_history > 20 * audit  # what writing the whole input on every line would cost


def test_expand_says_what_it_cannot_rebuild(tmp_path: Path) -> None:
    assert tandem(["audit", "expand", str(tmp_path / "missing.jsonl")]) == 2
    path = tmp_path / "audit.jsonl"
    orphan = {"trajectory_id": "t", "step": 3, "target": "cloud", "audit_id": "w-3", "input_ref": "w-2"}
    path.write_bytes(
        orjson.dumps({**orphan, "input_from": 2, "input_delta": [{"role": "user", "content": "x"}]}) + b"\n"
    )
    out = tmp_path / "ec2.jsonl"
    assert tandem(["audit", "expand", str(path), "--out", str(out)]) == 1
    assert audit_lines(out)[0]["input"] is None
