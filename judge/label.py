"""Teacher labels: ask a strong model, offline, which steps of each run needed the stronger model.

`tandem judge label` sends each trajectory (in chunks of at most `steps_per_request` steps) to an
OpenAI-compatible `/chat/completions` endpoint and asks for a JSON object
`{"cloud_steps": [step numbers]}`. The rows of a chunk get `teacher_label` 1 for the steps
named and 0 for the others. Models answer untidily, so the reply is parsed leniently (code
fences, prose around the JSON, a bare list, numbers as strings, `{"step": n}` items); a reply
that still cannot be read is asked again, and after `retries` failures its rows keep
`teacher_label: null` and are counted. A failed parse is never read as "all cloud": EC2-Bench's
LLM router did that, and it biased the labels.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from judge.features import FEATURE_SIGNALS, feature_index
from judge.progress import Progress
from judge.rows import JudgeTrainingError

SYSTEM_PROMPT = """You review the steps of an AI agent's run. Each step was answered by a small local \
model or by a stronger cloud model. Decide which steps NEEDED the stronger model: steps where a \
small model's action would likely be wrong in a way that matters for the task. Steps a small \
model handles reliably did not need it.

Answer with one JSON object and nothing else: {"cloud_steps": [<step numbers>]}. Use [] when no \
step needed it."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_KEYS = ("cloud_steps", "steps", "needs_cloud", "cloud")


@dataclass
class TeacherConfig:
    url: str  # base URL of an OpenAI-compatible API, e.g. http://localhost:8000/v1
    model: str
    api_key: str | None = None
    steps_per_request: int = 40
    retries: int = 2  # extra attempts per chunk, for HTTP failures and unreadable replies
    timeout_s: float = 120.0
    backoff_s: float = 1.0  # wait before attempt n+1: backoff_s * n
    temperature: float = 0.0


@dataclass
class LabelReport:
    trajectories: int = 0
    requests: int = 0
    labelled_rows: int = 0
    unlabelled_rows: int = 0  # rows of chunks whose replies could not be read or fetched
    positives: int = 0
    failures: list[str] = field(default_factory=list)


def parse_steps(text: str) -> list[int] | None:
    """The step numbers a teacher's reply names, or None when it names nothing readable."""
    if not isinstance(text, str):
        return None
    candidates = [*_FENCE.findall(text), text]
    for candidate in candidates:
        candidate = candidate.strip()
        for start, end in (("{", "}"), ("[", "]")):
            first, last = candidate.find(start), candidate.rfind(end)
            if first < 0 or last <= first:
                continue
            try:
                value = orjson.loads(candidate[first : last + 1])
            except orjson.JSONDecodeError:
                continue
            steps = _steps_of(value)
            if steps is not None:
                return steps
    return None


def _steps_of(value: Any) -> list[int] | None:
    if isinstance(value, dict):
        for key in _KEYS:
            if key in value:
                return _steps_of(value[key])
        return None
    if not isinstance(value, list):
        return None
    steps = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("step")
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            steps.append(item)
        elif isinstance(item, str) and item.strip().isdigit():
            steps.append(int(item.strip()))
        else:
            return None
    return steps


def describe_step(row: dict[str, Any]) -> str:
    """One line per step: what the teacher can see of it without the messages."""
    features = row.get("features") or []
    signals = [name for name in FEATURE_SIGNALS if features and features[feature_index(f"err_{name}")]]
    parts = [f"step {row['step']}", f"answered by {row.get('target', '?')}", f"action {row.get('action', '?')}"]
    if signals:
        parts.append(f"errors before it: {', '.join(signals)}")
    if row.get("next_signals"):  # imported or exported rows: what the action produced
        parts.append(f"errors after it: {', '.join(map(str, row['next_signals']))}")
    command = str(row.get("command") or "")[:300]
    excerpt = str(row.get("excerpt") or "")[:400]
    lines = [f"    command: {command}"] if command else []
    lines += [f"    {excerpt}"] if excerpt else []
    return "; ".join(parts) + "".join(f"\n{line}" for line in lines)


def build_prompt(task: str, outcome: Any, chunk: list[dict[str, Any]]) -> list[dict[str, str]]:
    result = "unknown"
    if isinstance(outcome, dict) and isinstance(outcome.get("success"), bool):
        result = "succeeded" if outcome["success"] else "failed"
    steps = "\n".join(describe_step(row) for row in chunk)
    user = f"Task: {task[:1500] or '(not recorded)'}\nThe run {result}.\n\nSteps:\n{steps}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


class Teacher:
    """Asks one endpoint; `ask` returns the step numbers or None after every attempt failed."""

    def __init__(
        self, config: TeacherConfig, client: httpx.Client | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.config = config
        if client is None and not config.url.startswith(("http://", "https://")):
            # Said now, not after every retry of every step has failed on it.
            raise JudgeTrainingError(
                f"--url {config.url!r} must start with http:// or https:// (e.g. http://host:8000/v1)"
            )
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self.client = client or httpx.Client(base_url=config.url.rstrip("/"), headers=headers, timeout=config.timeout_s)
        self.sleep = sleep
        self.requests = 0

    def ask(self, messages: list[dict[str, str]], failures: list[str]) -> list[int] | None:
        body = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature}
        for attempt in range(self.config.retries + 1):
            if attempt:
                self.sleep(self.config.backoff_s * attempt)
            self.requests += 1
            try:
                reply = self.client.post(
                    "/chat/completions", content=orjson.dumps(body), headers={"Content-Type": "application/json"}
                )
            except httpx.HTTPError as exc:
                failures.append(f"request failed: {type(exc).__name__}: {exc}")
                continue
            if reply.status_code in (401, 403, 404):
                raise JudgeTrainingError(
                    f"the teacher endpoint answered {reply.status_code} ({reply.text[:200]}); "
                    "check --url, --model and the API key"
                )
            if reply.status_code >= 400:
                failures.append(f"HTTP {reply.status_code}: {reply.text[:200]}")
                continue
            steps = parse_steps(_content(reply))
            if steps is not None:
                return steps
            failures.append(f"unreadable reply: {_content(reply)[:200]!r}")
        return None

    def close(self) -> None:
        self.client.close()


def _content(reply: httpx.Response) -> str:
    try:
        message = reply.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return ""
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def label_rows(rows: list[dict[str, Any]], teacher: Teacher, *, show_progress: bool = True) -> LabelReport:
    """Set `teacher_label` on every row the teacher answered for (in place); what happened."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        runs[str(row["trajectory_id"])].append(row)
    report = LabelReport(trajectories=len(runs))
    size = max(1, teacher.config.steps_per_request)
    bar = Progress("labelling", len(runs), enabled=show_progress)
    for run in runs.values():
        run.sort(key=lambda row: int(row["step"]))
        for offset in range(0, len(run), size):
            chunk = run[offset : offset + size]
            steps = teacher.ask(
                build_prompt(str(chunk[0].get("task") or ""), chunk[0].get("outcome"), chunk), report.failures
            )
            if steps is None:
                report.unlabelled_rows += len(chunk)
                continue
            named = set(steps)
            for row in chunk:
                row["teacher_label"] = int(int(row["step"]) in named)
                report.positives += row["teacher_label"]
            report.labelled_rows += len(chunk)
        bar.advance()
    bar.close()
    report.requests = teacher.requests
    return report
