"""Teacher labelling against a real HTTP server on 127.0.0.1, scripted per request."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from judge.cli import main
from judge.label import Teacher, TeacherConfig, label_rows, parse_steps
from judge.rows import JudgeTrainingError, load_rows, write_rows
from tests.judge.helpers import synthetic_rows


class ScriptedTeacher:
    """An OpenAI-compatible /chat/completions that answers from a script, one entry a request,
    and records every request body."""

    def __init__(self) -> None:
        self.script: list[tuple[int, Any]] = []
        self.received: list[dict[str, Any]] = []
        teacher = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                teacher.received.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), **orjson.loads(body)}
                )
                status, reply = teacher.script.pop(0) if teacher.script else (500, "script exhausted")
                if isinstance(reply, str) and status == 200:
                    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}]}
                data = reply if isinstance(reply, bytes) else orjson.dumps(reply)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def server() -> Iterator[ScriptedTeacher]:
    teacher = ScriptedTeacher()
    yield teacher
    teacher.close()


def _teacher(url: str, **options: Any) -> Teacher:
    return Teacher(TeacherConfig(url=url, model="teacher-model", api_key="sk-test", backoff_s=0, **options))


def test_labels_from_untidy_replies(server: ScriptedTeacher) -> None:
    rows = synthetic_rows(trajectories=3, steps=4)
    for row in rows:
        row["teacher_label"] = None
    server.script = [
        (200, '{"cloud_steps": [2, 4]}'),
        (200, 'Looking at the run, steps 1 and 3 matter.\n```json\n{"cloud_steps": ["1", 3]}\n```'),
        (200, "[]"),
    ]
    report = label_rows(rows, _teacher(server.url), show_progress=False)
    assert [row["teacher_label"] for row in rows] == [0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    assert report.labelled_rows == 12 and report.unlabelled_rows == 0 and report.positives == 4
    first = server.received[0]
    assert first["path"] == "/v1/chat/completions" and first["model"] == "teacher-model"
    assert first["auth"] == "Bearer sk-test"
    assert "step 1; answered by" in first["messages"][1]["content"]


def test_retries_http_errors_and_unreadable_replies_then_leaves_rows_unlabelled(server: ScriptedTeacher) -> None:
    rows = synthetic_rows(trajectories=2, steps=3)
    for row in rows:
        row["teacher_label"] = None
    server.script = [
        (503, {"error": {"message": "overloaded"}}),
        (200, '{"cloud_steps": [1]}'),  # first trajectory, after one retry
        (200, "I think the second step, maybe."),
        (200, '{"verdict": "unsure"}'),
        (200, b"not even json"),  # second trajectory: three unreadable answers, given up
    ]
    report = label_rows(rows, _teacher(server.url, retries=2), show_progress=False)
    assert [row["teacher_label"] for row in rows] == [1, 0, 0, None, None, None]
    assert report.unlabelled_rows == 3 and report.requests == 5
    assert any("HTTP 503" in failure for failure in report.failures)
    assert any("unreadable reply" in failure for failure in report.failures)


def test_long_runs_go_in_chunks(server: ScriptedTeacher) -> None:
    rows = synthetic_rows(trajectories=1, steps=5)
    server.script = [(200, '{"cloud_steps": [2]}'), (200, '{"cloud_steps": [5]}'), (200, '{"cloud_steps": []}')]
    label_rows(rows, _teacher(server.url, steps_per_request=2), show_progress=False)
    assert [row["teacher_label"] for row in rows] == [0, 1, 0, 0, 0]
    assert len(server.received) == 3  # steps 1-2, 3-4, 5: step 5 named in the second chunk is ignored


def test_a_refusing_endpoint_is_an_error(server: ScriptedTeacher) -> None:
    server.script = [(404, {"error": {"message": "model not found"}})]
    with pytest.raises(JudgeTrainingError, match=r"answered 404.*check --url, --model"):
        label_rows(synthetic_rows(trajectories=1, steps=2), _teacher(server.url), show_progress=False)


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ('{"cloud_steps": [1, 2]}', [1, 2]),
        ('```\n{"steps": [{"step": 3}]}\n```', [3]),
        ("Sure! [4, 5]", [4, 5]),
        ('{"cloud_steps": []}', []),
        ("no JSON here", None),
        ('{"cloud_steps": [true]}', None),
        ('{"cloud_steps": ["two"]}', None),
    ],
)
def test_parse_steps(text: str, steps: list[int] | None) -> None:
    assert parse_steps(text) == steps


def test_cli_label_writes_the_labelled_rows(
    server: ScriptedTeacher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = tmp_path / "steps.jsonl", tmp_path / "labelled.jsonl"
    write_rows(data, synthetic_rows(trajectories=2, steps=2))
    server.script = [(200, '{"cloud_steps": [1]}'), (200, '{"cloud_steps": [2]}')]
    monkeypatch.setenv("TEACHER_KEY", "sk-env")
    args = [
        "label",
        "--data",
        str(data),
        "--url",
        server.url,
        "--model",
        "m",
        "--out",
        str(out),
        "--api-key-env",
        "TEACHER_KEY",
    ]
    assert main(args) == 0
    assert [row["teacher_label"] for row in load_rows(out, show_progress=False)] == [1, 0, 0, 1]
    assert server.received[0]["auth"] == "Bearer sk-env"


def test_a_url_that_is_no_http_url_is_refused_before_any_request() -> None:
    """It was tried for every step, with retries, before the error said what was wrong (48 s)."""
    with pytest.raises(JudgeTrainingError, match="--url 'notaurl' must start with http:// or https://"):
        Teacher(TeacherConfig(url="notaurl", model="m"))
