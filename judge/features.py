"""Step features: a fixed-length vector that says what state a trajectory is in before a step.

The judge scores this vector to judge whether the step's action will fail (and so needs the
cloud). It reads only a bounded part of the conversation (the last `TAIL_MESSAGES` messages, the
head where the task is, the ends of the latest tool output), so the cost per step is flat however
long the trajectory grows; what the gateway already counts (step index, cloud steps) comes in as
`TrajectoryCounters` instead of being recounted from the messages.

Version 2 holds only features that mean the same for every agent family: counts, action types,
error signals, repetition, sizes, and shape of the real task (`judge.task`). Version 1's hashed
byte n-grams of the tool output and the task were learned from the demo's simulated text and
acted as noise on real runs; they are gone. Version 3 computes every value from the messages and
the step index alone, so a replayed run (judge/replay.py) and the gateway compute the same
vector for the same state: the request body's size (how a client formats its JSON, how large its
tool schemas and system prompt are) and the number of messages (how a harness lays out a turn)
are no longer features; the size of the run so far is the text it produced after its task.
Version 4 adds the run's own record (`RunRecord`): how many of its earlier steps the harness
reported as failed, lagged by one step so that nothing new is read on the answer's path (the
gateway labels each step when it writes the next step's record, off the path; the step just
before is what the error signals of the latest tool output already describe).
Version 5 adds four draft features (judge/draft.py), each a draft its harness will refuse; the
state features are version 4's. Version 6 types a call to a tool no table names by the verb its
name starts with (judge/actions.py) where it was `other`: the action values of such a step differ.
Version 7 reads the latest turn against the tail's earlier ones (`_TREND`): its output's sizes
less their decayed mean over the earlier turns (a harness that makes every output large, or
every reply long, divides out), and the tail's turns that failed by the harness's status, decayed
(judge/status.py's rule, the label's, read from the messages: an import and the gateway compute
it alike, and the step just before is in it). Chosen by leaving each agent family out in turn
(docs/judge.md); the state judge is not given the output's own sizes any more.

A model is tied to `FEATURE_VERSION`: any change to the names, order or meaning of the features
must bump it, and models trained on another version are refused at load.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from judge.actions import ACTION_TYPES, ActionType, classify_content, classify_tool_call, content_text, parse_arguments
from judge.actions import most_consequential as _most_consequential
from judge.record import EMPTY_RECORD, RECORD_FEATURE_NAMES, RunRecord
from judge.signals import quick_error_signals
from judge.status import command_of, failure_reason
from judge.task import HEAD_MESSAGES, real_task  # the head: where the task is looked for

FEATURE_VERSION = 7
# Versions whose state features are this version's, names and meaning: a `sees: state` model or
# row of one of them is served and trained on as it is (none yet: version 6 changed the state's).
STATE_VERSIONS: tuple[int, ...] = (7,)
TAIL_MESSAGES = 12  # the recent window the features read
LAST_ACTIONS = 3
# What of a tool result the error patterns scan: a failing command says so at its start ("command
# not found") or its end (traceback, test summary), rarely in the middle of a long output.
SIGNAL_HEAD, SIGNAL_TAIL = 512, 2048

# Frozen here rather than taken from judge.signals.SIGNALS: a signal added there must not
# silently change the vector a shipped model was trained on.
FEATURE_SIGNALS = (
    "traceback",
    "nonzero_exit",
    "command_not_found",
    "test_failure",
    "error",
    "syntax_error",
    "permission_denied",
    "timeout",
)

_SCALARS = (
    "step_log",
    "step_frac64",
    "context_chars_log",  # text of the messages after the task (contents, tool calls' names and arguments)
)
# Version 1 also read where the router had sent earlier steps (cloud share, steps since a cloud
# step): that says how the router behaved, not how the run is going, and it differs between
# a replayed run and a served one, so version 2 leaves it out (`TrajectoryCounters` still
# carries it for the online threshold).
_ACTIONS = tuple(f"act{i}_{kind.value}" for i in range(1, LAST_ACTIONS + 1) for kind in ACTION_TYPES)
_STATE = (
    "last_prose",
    "last_multi_call",
    *(f"err_{name}" for name in FEATURE_SIGNALS),
    "err_any",
    "err_prev",
    "results_count",
    "output_bytes_log",
    "repeat_last",
    "repeat_count",
    "type_streak",
    "invalid_last",
    "invalid_in_tail",
)
_HISTORY = (
    "err_streak",  # consecutive latest turns whose results showed an error
    "err_share_tail",  # share of the tail's results with an error
    "turns_since_err_log",  # turns since the last result with an error (tail only; all if none)
    "output_lines_log",
    "output_empty",
    "last_text_log",  # the last assistant turn's prose: how much it reasoned
    "last_calls",
    "submit_in_tail",
    "task_chars_log",
    "task_has_code",  # a code block or a traceback in the request
    "task_mentions_test",
)
# How the latest turn compares with the tail's earlier ones, and how the tail's turns went by the
# harness's own status (judge/status.py, the label's rule): a run's formatting (how large its
# harness makes every output) divides out of the first three.
_TREND = (
    "output_bytes_rel",  # output_bytes_log less its decayed mean over the tail's earlier turns
    "output_lines_rel",
    "last_text_rel",
    "tail_failed_decayed",  # the tail's turns that failed by their status, each weighing DECAY of the next
)
FEATURE_NAMES: tuple[str, ...] = (*_SCALARS, *_ACTIONS, *_STATE, *_HISTORY, *_TREND, *RECORD_FEATURE_NAMES)
N_FEATURES = len(FEATURE_NAMES)

Vector = npt.NDArray[np.float32]
Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TrajectoryCounters:
    """What the gateway already knows about the trajectory when it decides a step."""

    step: int  # 1-based index of the step being decided
    cloud_steps: int = 0  # steps answered by the cloud so far
    answered_steps: int = 0  # steps answered so far (edge or cloud)
    steps_since_cloud: int = 0  # answered steps since the last cloud step; all of them if none
    # Size of the request body: only decides whether what is read is kept by identity (no feature
    # reads it: a client's JSON formatting is no part of the step); 0: kept.
    request_bytes: int = 0
    # The run's own record of failures, lagged by one step (judge/record.py).
    record: RunRecord = EMPTY_RECORD


class _Turn(NamedTuple):
    """One assistant message of the tail, inspected once (a tuple: cheap to make per step)."""

    action: ActionType
    invalid: bool  # a tool call with arguments that are not a JSON object, or an unknown tool
    prose: bool  # no tool call and no command: the answer did nothing
    calls: int
    signature: tuple[object, ...]  # what it did (names and raw arguments), to spot repeats


_CACHE_LIMIT = 8192  # longer texts are classified afresh: the cache must stay small


class _ByIdentity:
    """Results kept by the object they were computed from, for the next steps of its run.

    A gateway that parses a body extending the trajectory's last one hands the same message
    objects again (router/protocol/prefix.py), so a message read at one step is found at the
    next ones by identity: no slicing or hashing of its text, which costs more than the lookup
    of a content-keyed cache. The object is held with its result, so its id is not reused while
    the entry lives, and so is bounded: in entries and in the characters held (an object over a
    sixteenth of that is not kept), the oldest entries going first, one at a time (clearing a
    full table at once would free thousands of messages on one step's path).
    """

    __slots__ = ("_budget", "_held", "_items", "_limit")

    def __init__(self, limit: int, budget_chars: int) -> None:
        # id -> (the object, the context, the value, the characters it holds), oldest first.
        self._items: OrderedDict[int, tuple[object, object, Any, int]] = OrderedDict()
        self._limit = limit
        self._budget = budget_chars
        self._held = 0

    def get(self, obj: object, context: object = None) -> Any:
        item = self._items.get(id(obj))
        # The context (what else the result depends on) is equal, not the same object: a
        # request's tools are parsed anew at every step.
        if item is not None and item[0] is obj and (item[1] is context or item[1] == context):
            return item[2]
        return None

    def put(self, obj: object, value: Any, context: object = None, size: int = 0) -> None:
        """Keep `value` for `obj`, which holds about `size` characters."""
        if size > self._budget // 16:
            return
        old = self._items.pop(id(obj), None)
        if old is not None:
            self._held -= old[3]
        self._items[id(obj)] = (obj, context, value, size)
        self._held += size
        while len(self._items) > self._limit or self._held > self._budget:
            self._held -= self._items.popitem(last=False)[1][3]

    def clear(self) -> None:
        self._items.clear()
        self._held = 0


# A request body from this size on is parsed from the trajectory's last one, its earlier messages
# the objects parsed before (router/protocol/prefix.py's MIN_BYTES); smaller ones are parsed whole.
IDENTITY_FROM_BYTES = 64 * 1024
# A few megabytes each: enough for the tails of a hundred long runs going on at once.
_TURNS = _ByIdentity(4096, 1_000_000)  # assistant message -> _Turn (context: the declared tool names)
_SIGNALS = _ByIdentity(4096, 3_000_000)  # tool result text -> its error signals
_TASKS = _ByIdentity(1024, 2_000_000)  # first message of the head -> (the head's messages, the task's shape)
# assistant message -> _Outcome (context: the messages after it, and the contents read)
_OUTCOMES = _ByIdentity(4096, 3_000_000)


@lru_cache(maxsize=2048)
def _cached_call(name: str, raw: str) -> tuple[ActionType, bool]:
    args = parse_arguments(raw)
    return classify_tool_call(name, args if args is not None else {}), args is not None


def _call(name: str, raw: object) -> tuple[ActionType, bool]:
    """A tool call's action type and whether its arguments are a JSON object.

    Each assistant message is read again on the next several steps (it stays in the tail), so
    results are cached by content; the gateway parses every request afresh, so identity would
    never hit.
    """
    if isinstance(raw, str) and len(raw) <= _CACHE_LIMIT:
        return _cached_call(name, raw)
    args = parse_arguments(raw)
    return classify_tool_call(name, args if args is not None else {}), args is not None


@lru_cache(maxsize=1024)
def _cached_content(text: str) -> list[ActionType]:
    return classify_content(text)


def _inspect(message: Message, declared: frozenset[str] | None, keep: bool = False) -> _Turn:
    """The turn an assistant message is; with `keep`, found and kept by the message's identity
    (a request whose objects are not reused finds nothing there: it does not look)."""
    if not keep:
        return _inspected(message, declared)
    # What the turn is read from, by identity too: a caller that gives the dict new contents
    # (offline tools building a run step by step) is not answered from before.
    parts = (message.get("tool_calls"), message.get("content"))
    kept = _TURNS.get(message, declared)
    if kept is not None and kept[0][0] is parts[0] and kept[0][1] is parts[1]:
        turn: _Turn = kept[1]
        return turn
    turn = _inspected(message, declared)
    size = sum(len(part) for part in turn.signature if isinstance(part, str))
    _TURNS.put(message, (parts, turn), declared, size + (len(parts[1]) if isinstance(parts[1], str) else 0))
    return turn


def _inspected(message: Message, declared: frozenset[str] | None) -> _Turn:
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        kinds: list[ActionType] = []
        signature: list[object] = []
        invalid = False
        for call in tool_calls:
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            name, raw = str(function.get("name") or ""), function.get("arguments")
            kind, is_object = _call(name, raw)
            invalid = invalid or not is_object or (declared is not None and name not in declared)
            kinds.append(kind)
            signature += (name, raw)
        return _Turn(_most_consequential(kinds), invalid, False, len(tool_calls), tuple(signature))
    text = content_text(message)
    kinds = _cached_content(text) if len(text) <= _CACHE_LIMIT else classify_content(text)
    # The command usually closes the message; its end identifies a repeat without the prose.
    return _Turn(_most_consequential(kinds), False, not kinds, len(kinds), (text[-300:],))


inspect_turn = _inspect  # for judge/draft.py: the draft is read as the turns before it are


def _signals(text: str, keep: bool = False) -> tuple[str, ...]:
    found: tuple[str, ...] | None = _SIGNALS.get(text) if keep else None
    if found is None:
        read = text[:SIGNAL_HEAD] + "\n" + text[-SIGNAL_TAIL:] if len(text) > SIGNAL_HEAD + SIGNAL_TAIL else text
        found = _cached_signals(read)
        if keep:
            _SIGNALS.put(text, found, size=len(text))
    return found


@lru_cache(maxsize=1024)
def _cached_signals(text: str) -> tuple[str, ...]:
    # This step's latest tool output is the next step's previous one: scan it once.
    return tuple(quick_error_signals(text))


@lru_cache(maxsize=1024)
def _task_shape(task: str) -> tuple[float, float, float]:
    # The task is the same for every step of a trajectory: read it once.
    lowered = task.lower()
    has_code = "```" in task or "Traceback (most recent call last)" in task or "\n    " in task
    return math.log1p(len(task)), float(has_code), float("test" in lowered)


def _first_user(head: list[Message]) -> Message | None:
    for message in head:
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


_RESULT_ROLES = ("tool", "user", "function", "ipython")  # messages that carry an observation


def _results(messages: list[Message], start: int, end: int, task: Message | None) -> list[str]:
    """Texts of the tool results (tool messages, or user messages carrying an observation)."""
    return [content_text(m) for m in messages[start:end] if m is not task and m.get("role") in _RESULT_ROLES]


def step_features(
    messages: list[Message], counters: TrajectoryCounters, tools: list[dict[str, Any]] | None = None
) -> Vector:
    """The feature vector (float32, `N_FEATURES` long, in `FEATURE_NAMES` order) of one step.

    `messages` is the request's conversation; `tools` its `tools` array (to spot calls of tools
    that do not exist). Reads at most `TAIL_MESSAGES + HEAD_MESSAGES` messages.
    """
    head = messages[:HEAD_MESSAGES]
    task = _first_user(head)
    recent = messages[-TAIL_MESSAGES:]
    tail = [m for m in recent if isinstance(m, dict)]
    assistants = [i for i, m in enumerate(tail) if m.get("role") == "assistant"]
    declared = tool_names(tools)
    # Keep what is read by identity only where the next step can find it so: a body parsed whole
    # (under IDENTITY_FROM_BYTES) is all new objects at every step, and keeping them costs memory.
    keep = counters.request_bytes <= 0 or counters.request_bytes >= IDENTITY_FROM_BYTES
    task_shape, reused = _task_of(head, keep)
    # The rest is kept only for a request whose objects are those of a request before (its head
    # was found by identity): one parsed afresh finds nothing, and would only fill the tables.
    keep = keep and reused
    turns = [_inspect(tail[i], declared, keep) for i in assistants]
    last = assistants[-1] if assistants else -1
    latest = _results(tail, last + 1, len(tail), task)
    previous = _results(tail, assistants[-2] + 1, last, task) if len(assistants) >= 2 else []
    output = "\n".join(latest)
    found: set[str] = set()
    for text in latest:
        found.update(_signals(text, keep))

    values: list[float] = _scalars(counters, len(messages), recent, head, task)
    for back in range(1, LAST_ACTIONS + 1):
        one_hot = [0.0] * len(ACTION_TYPES)
        if len(turns) >= back:
            one_hot[ACTION_TYPES.index(turns[-back].action)] = 1.0
        values += one_hot
    final = turns[-1] if turns else None
    values += [float(final is not None and final.prose), float(final is not None and final.calls > 1)]
    values += [float(name in found) for name in FEATURE_SIGNALS]
    values += [float(bool(found)), float(any(_signals(text, keep) for text in previous)), float(len(latest))]
    values.append(math.log1p(len(output)))
    values += _repetition(turns)
    values += [float(final is not None and final.invalid), float(sum(turn.invalid for turn in turns))]
    values += _error_history(tail, assistants, task, keep)
    values += [math.log1p(output.count("\n") + (1 if output else 0)), float(not output.strip())]
    last_text = content_text(tail[last]) if last >= 0 else ""
    values += [math.log1p(len(last_text)), float(final.calls if final is not None else 0)]
    values.append(float(any(turn.action == ActionType.SUBMIT for turn in turns)))
    values += task_shape
    values += _trend(tail, assistants, task, keep)
    values += counters.record.state_values()
    return np.array(values, dtype=np.float32)


def _task_of(head: list[Message], keep: bool) -> tuple[tuple[float, float, float], bool]:
    """The shape of the real task in the head: the same objects as the step before, found by
    identity; else read (`real_task` keeps its own cache for a head parsed anew). And whether
    the head's first message is an object seen before (the request's objects are reused)."""
    contents = [m.get("content") if isinstance(m, dict) else m for m in head]
    kept = _TASKS.get(head[0]) if head else None
    if kept is not None:
        same = len(kept[0]) == len(head) and all(map(operator.is_, kept[0], head))
        if same and all(map(operator.is_, kept[1], contents)):
            shape: tuple[float, float, float] = kept[2]
            return shape, True
    shape = _task_shape(real_task(head))
    if head and keep:
        _TASKS.put(head[0], (head, contents, shape), size=sum(len(c) for c in contents if isinstance(c, str)))
    return shape, kept is not None


def _error_history(tail: list[Message], assistants: list[int], task: Message | None, keep: bool) -> list[float]:
    """How the recent turns went: a run that keeps failing is where a small model flounders."""
    failed: list[bool] = []
    for number, index in enumerate(assistants):
        end = assistants[number + 1] if number + 1 < len(assistants) else len(tail)
        failed.append(any(_signals(text, keep) for text in _results(tail, index + 1, end, task)))
    streak = 0
    for flag in reversed(failed):
        if not flag:
            break
        streak += 1
    since = next((age for age, flag in enumerate(reversed(failed)) if flag), len(failed))
    share = sum(failed) / len(failed) if failed else 0.0
    return [float(streak), share, math.log1p(since)]


DECAY = 0.85  # an earlier turn's weight against the one after it (chosen by leaving each family out)


class _Outcome(NamedTuple):
    """One turn of the tail and what followed it, measured once."""

    sizes: tuple[float, float, float]  # its results' bytes and lines, its own prose (logs), as the latest's
    failed: bool | None  # by the harness's status (judge/status.py); None: nothing followed it


def _outcome(tail: list[Message], index: int, end: int, task: Message | None, keep: bool) -> _Outcome:
    """The turn at `index`, its results up to `end`; with `keep`, found and kept by identity (the
    turn and the messages after it: a turn read at one step is an earlier one at the next)."""
    after = tuple(tail[index + 1 : end])
    read: tuple[object, ...] = ()
    if keep:
        # What the outcome is read from, by identity too: a caller that gives a message new
        # contents (offline tools building a run step by step) is not answered from before.
        read = (after, tail[index].get("content"), tail[index].get("tool_calls"), *[m.get("content") for m in after])
        kept: _Outcome | None = _OUTCOMES.get(tail[index], read)
        if kept is not None:
            return kept
    texts = [content_text(m) for m in after]
    # The output as the latest one's is measured (`_results`): the results, not other messages.
    output = "\n".join(
        text for m, text in zip(after, texts, strict=True) if m is not task and m.get("role") in _RESULT_ROLES
    )
    prose = content_text(tail[index])
    failed = None
    if after:
        command, shell = command_of(tail[index])
        failed = failure_reason(command, shell, texts) is not None
    sizes = (math.log1p(len(output)), math.log1p(output.count("\n") + (1 if output else 0)), math.log1p(len(prose)))
    found = _Outcome(sizes, failed)
    if keep:
        _OUTCOMES.put(tail[index], found, read, sum(map(len, texts)) + len(prose))
    return found


def _trend(tail: list[Message], assistants: list[int], task: Message | None, keep: bool) -> list[float]:
    """`_TREND`: the latest turn's sizes against the tail's earlier turns (a decayed mean, the
    first earlier turn its start), and the tail's turns' record by their status."""
    ends = [*assistants[1:], len(tail)] if assistants else []
    outcomes = [_outcome(tail, index, end, task, keep) for index, end in zip(assistants, ends, strict=True)]
    rel = [0.0, 0.0, 0.0]
    if len(outcomes) >= 2:
        mean = outcomes[0].sizes
        for earlier in outcomes[1:-1]:
            mean = (
                DECAY * mean[0] + (1 - DECAY) * earlier.sizes[0],
                DECAY * mean[1] + (1 - DECAY) * earlier.sizes[1],
                DECAY * mean[2] + (1 - DECAY) * earlier.sizes[2],
            )
        latest = outcomes[-1].sizes
        rel = [latest[0] - mean[0], latest[1] - mean[1], latest[2] - mean[2]]
    decayed = 0.0
    for outcome in outcomes:
        if outcome.failed is not None:
            decayed = DECAY * decayed + (1 - DECAY) * outcome.failed
    return [*rel, decayed]


def tool_names(tools: list[dict[str, Any]] | None) -> frozenset[str] | None:
    if not tools:
        return None  # no tools declared: a call's name cannot be checked
    names = set()
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            names.add(str((function if isinstance(function, dict) else tool).get("name") or ""))
    return frozenset(names)


def _chars(message: Message) -> int:
    """Characters of a message's text: its content and its tool calls' names and arguments (the
    same whether a harness puts a command in the text or in a call)."""
    size = len(content_text(message))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                size += len(str(function.get("name") or "")) + len(str(function.get("arguments") or ""))
    return size


def _produced(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") not in ("system", "developer")


def _scalars(
    counters: TrajectoryCounters, total: int, recent: list[Message], head: list[Message], task: Message | None
) -> list[float]:
    # What the run produced after its task (the task's size is a feature of its own; system
    # prompts and tool schemas are the harness's, not the run's): exact while the run fits in the
    # tail, else the tail's mean per message times the messages produced, a flat cost per step.
    first = next((i + 1 for i, m in enumerate(head) if m is task), 0) if task is not None else 0
    first += sum(1 for m in head[first:] if not _produced(m))
    start = total - len(recent)  # where the tail begins
    window = [m for m in recent[max(first - start, 0) :] if _produced(m)]
    produced = total - first
    chars = sum(_chars(m) for m in window)
    context_chars = chars if start <= first or not window else chars * produced // len(window)
    return [
        math.log1p(max(counters.step, 0)),
        min(max(counters.step, 0), 64) / 64,
        math.log1p(context_chars),
    ]


def _repetition(turns: list[_Turn]) -> list[float]:
    """Whether the agent is repeating itself: a loop is where a small model needs help."""
    if not turns:
        return [0.0, 0.0, 0.0]
    last = turns[-1]
    repeats = sum(turn.signature == last.signature for turn in turns[:-1])
    streak = 0
    for turn in reversed(turns):
        if turn.action != last.action:
            break
        streak += 1
    return [float(len(turns) >= 2 and turns[-2].signature == last.signature), float(repeats), float(streak)]


def clear_caches() -> None:
    """Forget cached classifications (benchmarks start each pass cold, as a new process would)."""
    _cached_call.cache_clear()
    _cached_content.cache_clear()
    _task_shape.cache_clear()
    _cached_signals.cache_clear()
    for table in (_TURNS, _SIGNALS, _TASKS, _OUTCOMES):
        table.clear()


def feature_index(name: str) -> int:
    return FEATURE_NAMES.index(name)
