"""Which trajectory a request belongs to, and whether it is a new step or a retry.

Sources, in order: the `/s/{session}/v1` path, the headers agents send (`X-Session-ID`,
`X-Claude-Code-Session-Id`, `session-id`, `x-litellm-session-id`), the body's `session_id`,
`litellm_session_id`, `metadata.session_id`, Claude Code's `metadata.user_id` session,
`prompt_cache_key`; then, as a last resort, stitching by message history. `user` is not a source:
it names a person across many runs; it scopes stitching instead (`client_scope`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

import orjson

from router.protocol.numbers import whole_number
from router.protocol.text import text_of
from router.trajectory.fields import answer_form, transcript_forms
from router.trajectory.resent import react_form, text_calls

SESSION_HEADERS = ("x-session-id", "x-claude-code-session-id", "session-id", "x-litellm-session-id")
SESSION_BODY_KEYS = ("session_id", "litellm_session_id")
RETRY_HEADER = "x-stainless-retry-count"
# fullmatch, not match: `$` would let a trailing newline through (an id goes into headers).
# A session id kept as sent (longer, or of other characters, it is hashed: `trajectory_id`).
TRAJECTORY_ID = re.compile(r"[A-Za-z0-9._:@+=~-]{1,200}")
# A client key's namespace (`namespace_of`: 6 bytes of digest, in hex) and the `:` after it.
NAMESPACE_CHARS = 12
# A whole trajectory id: a plain session of up to 200 characters behind its namespace. The
# trajectory API, the operator's view and the export must read every id the gateway hands out:
# checked against the session's 200, a namespaced run could be neither read nor closed, and
# `tandem trajectories export` stops at the first id the API refuses.
MAX_ID_CHARS = 200 + NAMESPACE_CHARS + 1
_WHOLE_ID = re.compile(rf"[A-Za-z0-9._:@+=~-]{{1,{MAX_ID_CHARS}}}")
# Bytes of the body's end hashed for the retry fingerprint: a new step appends messages, so
# its end differs; a retry resends the same bytes. Hashing the tail keeps the cost flat
# however long the trajectory grows.
FINGERPRINT_TAIL = 8192


# Codex names each agent's own thread (`thread-id`) and, on a sub-agent's requests, the thread
# that spawned it; its session id and prompt cache key stay the root thread's for all of them.
THREAD_HEADER = "thread-id"
PARENT_THREAD_HEADER = "x-codex-parent-thread-id"


def spawned_thread(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """A sub-agent's own thread and its parent's, where the client names them (Codex's
    spawned agents); None for a run's root thread and for clients that do not."""
    parent = headers.get(PARENT_THREAD_HEADER)
    thread = headers.get(THREAD_HEADER)
    if parent and thread and parent != thread:
        return thread, parent
    return None


def thread_trajectories(namespace: str, session: str, thread: str, parent: str) -> tuple[str, str]:
    """The trajectory of a spawned thread of the run `session`, and its parent's: the root
    thread's is the run's own, another's is `<run>~<thread>` (a sub-agent's children nest)."""

    def of(name: str) -> str:
        return trajectory_id(namespace, session if name == session else f"{session}~{name}")

    return of(thread), of(parent)


def cache_parent(namespace: str, body: dict[str, Any], own: str) -> str | None:
    """The trajectory a request's `prompt_cache_key` names when it is not the request's own: an
    OpenHands sub-agent (its Task tool) names its own conversation as its session and shares its
    parent conversation's cache key. None otherwise."""
    key = body.get("prompt_cache_key")
    if not isinstance(key, str) or not key:
        return None
    parent = trajectory_id(namespace, key)
    return parent if parent != own else None


def session_id(path_session: str | None, headers: Mapping[str, str], body: dict[str, Any]) -> str | None:
    if path_session:
        return path_session
    for name in SESSION_HEADERS:
        value = headers.get(name)
        if value:
            return value
    for key in SESSION_BODY_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        value = metadata.get("session_id")
        if isinstance(value, str) and value:
            return value
        value = _user_id_session(metadata.get("user_id"))
        if value:
            return value
    value = body.get("prompt_cache_key")
    if isinstance(value, str) and value:
        return value
    return None


# Claude Code's `metadata.user_id`: JSON with a `session_id` (2.x), or `user_…_session_<uuid>`.
_USER_ID_SESSION = re.compile(r"_session_([0-9A-Fa-f-]{8,64})$")


def _user_id_session(user_id: Any) -> str | None:
    if not isinstance(user_id, str) or not user_id:
        return None
    if user_id.startswith("{"):
        with contextlib.suppress(orjson.JSONDecodeError):
            parsed = orjson.loads(user_id)
            value = parsed.get("session_id") if isinstance(parsed, dict) else None
            return value if isinstance(value, str) and value else None
        return None
    match = _USER_ID_SESSION.search(user_id)
    return match.group(1) if match else None


# What a request says of who sent it without naming a session: `user` (a person, or an
# agent's own run id), `safety_identifier`, `metadata`. Not a trajectory on its own (one user has
# many runs), but two requests that differ in it are never one run: it scopes stitching. Read
# from the request as the client sent it, before any redaction, so that a redacted `user`
# still tells runs apart.
SCOPE_BODY_KEYS = ("user", "safety_identifier", "metadata")


def client_scope(body: Mapping[str, Any]) -> str:
    """A digest of what the request says of its sender (`SCOPE_BODY_KEYS`), "" when nothing."""
    said = {key: body[key] for key in SCOPE_BODY_KEYS if body.get(key) not in (None, "", {})}
    if not said:
        return ""
    return _digest(orjson.dumps(said, option=orjson.OPT_SORT_KEYS, default=str), 8)


def _digest(data: bytes | memoryview, size: int = 12) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


@functools.lru_cache(maxsize=256)  # per request, and a deployment has a few keys (all checked)
def namespace_of(client_key: str | None) -> str:
    """Trajectory ids are namespaced by client key, so two clients never share one."""
    return _digest(client_key.encode(), NAMESPACE_CHARS // 2) if client_key else ""


def trajectory_id(namespace: str, session: str) -> str:
    """A safe id for a session: kept as sent when it is plain, else a hash of it."""
    if not is_plain_session(session):
        session = "h-" + _digest(session.encode())
    return f"{namespace}:{session}" if namespace else session


# Random bytes for new trajectory ids and step tokens, drawn from the system a few kilobytes at a
# time: the same randomness as one os.urandom call per id, without a system call per step.
_RANDOM = bytearray()
# A forked worker draws its own: two processes handing out the same ids would merge runs.
os.register_at_fork(after_in_child=_RANDOM.clear)


def random_hex(size: int) -> str:
    """`os.urandom(size).hex()`, from the pool (`size` at most 256)."""
    if len(_RANDOM) < size:
        _RANDOM[:] = os.urandom(4096)
    token = _RANDOM[-size:].hex()
    del _RANDOM[-size:]
    return token


def new_trajectory_id(namespace: str) -> str:
    session = f"traj-{random_hex(10)}"  # 20 hex digits, as before; no UUID object made
    return f"{namespace}:{session}" if namespace else session


def is_valid_id(value: str) -> bool:
    """Whether `value` may be a trajectory id (one the gateway handed out, namespaced or not)."""
    return bool(_WHOLE_ID.fullmatch(value))


def is_plain_session(value: str) -> bool:
    """Whether `value` is kept as an id's session part as it is (else it is hashed). `.` and
    `..` are hashed: a URL's dot segments, clients drop them from `/v1/trajectories/{id}`."""
    return value not in (".", "..") and bool(TRAJECTORY_ID.fullmatch(value))


def fingerprint(body: bytes | memoryview) -> str:
    return f"{len(body)}-{_digest(body[-FINGERPRINT_TAIL:], 8)}"


def is_client_retry(headers: Mapping[str, str]) -> bool:
    return (whole_number(headers.get(RETRY_HEADER)) or 0) > 0


# The keys of a message that say what the conversation was; everything else (cache_control,
# litellm's provider_specific_fields, reasoning blocks, refusal: null…) is a per-request marker
# that clients add, move or drop from one step to the next.
_KEPT = ("role", "tool_call_id", "name")


def canonical(message: dict[str, Any], parse_arguments: bool = True) -> dict[str, Any]:
    """A message as history stitching compares it: string content and the same text as a list
    of parts alike, no per-request markers, tool call arguments as parsed JSON (as written with
    `parse_arguments` false)."""
    out: dict[str, Any] = {k: message[k] for k in _KEPT if message.get(k) is not None}
    content = message.get("content")
    if isinstance(content, list):
        parts = [
            {k: v for k, v in part.items() if k != "cache_control"} if isinstance(part, dict) else part
            for part in content
        ]
        if all(isinstance(p, dict) and p.get("type") == "text" for p in parts):
            content = "".join(str(p.get("text", "")) for p in parts)
        else:
            content = parts
    if message.get("role") == "assistant" and isinstance(content, str):
        content = content.strip()  # clients trim the answer they resend
    out["content"] = content or ""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [_call(call, parse_arguments) for call in calls if isinstance(call, dict)]
    return out


def _call(call: dict[str, Any], parse_arguments: bool) -> list[Any]:
    function = call.get("function")
    if not isinstance(function, dict):
        function = {}
    arguments = function.get("arguments")
    if parse_arguments and isinstance(arguments, str):
        with contextlib.suppress(orjson.JSONDecodeError):
            arguments = orjson.loads(arguments)
    return [call.get("id"), function.get("name"), arguments]


HISTORY_DIGEST = 16


def message_digest(message: dict[str, Any]) -> tuple[bytes, int]:
    """A message's digest as history stitching compares it, and the size of what was hashed."""
    try:
        data = orjson.dumps(canonical(message), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        # Arguments that parse into JSON nested deeper than orjson writes (254 levels; a string
        # holds up to the 1,024 it reads): compared as written, as arguments that are not JSON.
        data = orjson.dumps(canonical(message, parse_arguments=False), option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(data, digest_size=HISTORY_DIGEST).digest(), len(data)


def chain_start(namespace: str) -> bytes:
    return hashlib.blake2b(namespace.encode(), digest_size=HISTORY_DIGEST).digest()


def chain_link(chain: bytes, digest: bytes) -> bytes:
    """The key of a history one message longer: a chain, so that the key of a history's every
    prefix comes with it (`history.HistoryKeys` reuses them from one step to the next)."""
    return hashlib.blake2b(chain + digest, digest_size=HISTORY_DIGEST).digest()


def history_keys(namespace: str, messages: list[dict[str, Any]]) -> tuple[str | None, str]:
    """Two stitching keys in one pass over the history: the key of the history this request
    continues (its messages before the last assistant message: the previous request's whole
    history), and the key of this request's whole history. Computed from scratch; the gateway
    uses `history.HistoryKeys`, which gives the same keys hashing only the messages it has not
    seen."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    chain = chain_start(namespace)
    previous = None
    for index, message in enumerate(messages):
        if index == last_assistant:
            previous = chain.hex()
        chain = chain_link(chain, message_digest(message)[0])
    return previous, chain.hex()


# One tool call of an answer as its identity reads it: (id, name, arguments as sent).
Call = tuple[str | None, str | None, str | None]


# An answer noted under several keys (each choice's with `n` > 1; an answer's calls alone),
# joined: the client goes on with any one.
CHOICES_SEPARATOR = ","

# At most this many of a request's stop strings are tried on the answer it resends.
MAX_STOPS = 8


def stop_strings(body: Mapping[str, Any]) -> tuple[str, ...]:
    """A request's stop strings (`stop`: a string or a list), `MAX_STOPS` at most."""
    stop = body.get("stop")
    if isinstance(stop, str):
        return (stop,) if stop.strip() else ()
    if not isinstance(stop, list):
        return ()
    return tuple(s for s in stop[:MAX_STOPS] if isinstance(s, str) and s.strip())


def _without_stop(text: str, stop: str) -> str | None:
    """`text` up to the stop string a client wrote back after the answer, or None when it has
    none. A provider stops at the stop string's first place and leaves it out, so the answer
    it gave never holds one: what follows it is the client's (OpenHands writes `</function>`
    back after a `</function` stop, smolagents `</code>`, a ReAct loop `Observation:`, and
    CrewAI the tool's result after it, in the same assistant message)."""
    at = text.find(stop.strip())
    return text[:at] if at > 0 else None


def _arguments_form(arguments: str | None) -> bytes:
    """Arguments as the identity compares them: parsed JSON re-serialised with sorted keys (a
    client may re-serialise what it was given), else the string as it is. No arguments, `null`,
    `{}` and `[]` are one form: LangChain resends any of them as `{}`."""
    if not arguments:
        return b""
    try:
        parsed = orjson.loads(arguments)
        return orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS) if parsed or parsed is False else b""
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # not JSON, or too deep to write
        return arguments.encode()


# Characters a client may rewrite in a call's id: Roo Code resends each id with every character
# but letters, digits, `_` and `-` as `_` (Kimi's ids are `functions.read_file:0`).
_ID_REWRITTEN = re.compile(r"[^A-Za-z0-9_-]")


def _calls_form(calls: list[Call], with_ids: bool) -> bytes:
    out = bytearray(b"\x1f")
    for call_id, name, arguments in calls:
        given = _ID_REWRITTEN.sub("_", call_id) if with_ids and call_id else ""
        out += b"\x1e" + given.encode() + b"\x1d" + (name or "").encode()
        out += b"\x1d" + _arguments_form(arguments)
    return bytes(out)


# The end of a reasoning block a model writes in its text (Qwen3, DeepSeek-R1 served without a
# reasoning parser); clients (Roo Code, Agno, AutoGen, pydantic-ai) resend the text after it.
THINK_END = "</think>"


def after_thinking(text: str) -> str | None:
    """The text after its first reasoning block's end, or None without one. The block's start
    is not asked for: a chat template may open it in the prompt (Agno reads it so too)."""
    at = text.find(THINK_END)
    return None if at < 0 else text[at + len(THINK_END) :]


def _call_order(call: Call) -> tuple[str, str, str]:
    return (call[0] or "", call[1] or "", call[2] or "")


def other_keys(said: bool, calls: list[Call], after_think: str | None, text: str | None = None) -> list[str]:
    """The keys an answer is noted under besides its own (`answer_key`), for the forms clients
    resend it in: its calls alone where it has text too (`calls_alone_key`); its text after its
    reasoning block (`after_think`: that text's `answer_key` with the calls); a text ReAct
    step's parts (`resent.react_form` of `text`, the answer's text where it is at hand), or an
    answer of fields' values (`fields.answer_form`, its key after `FIELDS`); its
    first call alone and its last alone, where it made several with ids (CrewAI resends the
    first only; one message a call ends with the last)."""
    keys: list[str] = []
    alone = calls_alone_key(calls) if said else None
    if alone is not None:
        keys.append(alone)
    if after_think is not None:
        keys.append(after_think)
    if text is not None and not calls:
        react = react_form(text)
        if react is not None:
            keys.append(answer_key(react, []))
        fields = answer_form(text)
        if fields is not None:
            keys.append(FIELDS + answer_key(fields, []))
    if len(calls) > 1 and all(call_id for call_id, _, _ in calls):
        keys += [answer_key("", calls[:1]), answer_key("", calls[-1:])]
        # Its calls alone in the order of their ids: smolagents writes parallel calls back in
        # the order they finished, not the order given (`_answer_keys` sorts a resent list so).
        keys.append(answer_key("", sorted(calls, key=_call_order)))
    return keys


# Before the key of an answer of fields (`fields.answer_form`): such an answer is also noted in
# its client's stitching space, where a rebuilt prompt that lists it finds it (`transcript_keys`).
FIELDS = "t"  # not a hex digit: no other key starts so


def transcript_keys(messages: list[dict[str, Any]]) -> tuple[str, ...]:
    """The keys of the answer a rebuilt prompt's last message lists as its last step
    (`fields.transcript_forms`), noted so by `other_keys`; none for other histories."""
    if not messages or messages[-1].get("role") != "user":
        return ()
    forms = transcript_forms(text_of(messages[-1].get("content")))
    return tuple(FIELDS + answer_key(form, []) for form in forms)


def answer_key(text: str, calls: list[Call]) -> str:
    """An answer's whole identity, as the gateway delivered it and as the client resends it: its
    text (trimmed: clients trim what they resend) and every tool call's id, name and arguments.
    Runs with the same history are told apart by it; two runs' answers share a key only when
    they are the same answer, tool-call ids included. Calls delivered without an id are keyed
    without ids (a client may make its own up): `resent_answer` gives both forms."""
    with_ids = all(call_id for call_id, _, _ in calls)
    digest = hashlib.blake2b(text.strip().encode(), digest_size=8)
    digest.update(_calls_form(calls, with_ids))
    return digest.hexdigest()


# The most text of a streamed answer kept to read a text ReAct step's parts from (a step is a
# thought and a call: far shorter).
KEPT_TEXT = 32 * 1024


class AnswerKeyer:
    """`answer_key` of a text that arrives in pieces (a stream's deltas): the pieces are hashed
    as they come, the whitespace `strip` would drop held back (the text itself is kept only up
    to `KEPT_TEXT`, for `other_keys`)."""

    __slots__ = ("_after", "_hash", "_kept", "_pieces", "_space", "_started", "_tail")

    def __init__(self, follow_thinking: bool = True) -> None:
        # The text itself, up to `KEPT_TEXT` characters: a text ReAct step is also keyed by its
        # parts (`resent.react_form`), read from the whole text at the end.
        self._pieces: list[str] | None = []
        self._kept = 0
        self._hash = hashlib.blake2b(digest_size=8)
        self._started = False  # a character other than whitespace was seen
        self._space = ""  # whitespace at the end so far: hashed only if more text follows
        # The text after a reasoning block's end (`after_thinking`), keyed apart once it is
        # seen; until then the last characters, where the end may begin.
        self._tail: str | None = "" if follow_thinking else None
        self._after: AnswerKeyer | None = None

    def add(self, piece: str) -> None:
        if self._pieces is not None:
            self._kept += len(piece)
            if self._kept > KEPT_TEXT:
                self._pieces = None
            else:
                self._pieces.append(piece)
        if self._after is not None:
            self._after.add(piece)
        elif self._tail is not None:
            seen = self._tail + piece
            at = seen.find(THINK_END)
            if at >= 0:
                self._after, self._tail = AnswerKeyer(follow_thinking=False), None
                self._after._pieces = None  # keyed by its text alone (`other_keys` reads ours)
                self._after.add(seen[at + len(THINK_END) :])
            else:
                self._tail = seen[-(len(THINK_END) - 1) :]
        if not self._started:
            piece = piece.lstrip()
            if not piece:
                return
            self._started = True
        core = piece.rstrip()
        if not core:
            self._space += piece
            return
        self._hash.update((self._space + core).encode())
        self._space = piece[len(core) :]

    def other_keys(self, calls: list[Call]) -> list[str]:
        """`other_keys` of the text so far and `calls`."""
        text = None if self._pieces is None else "".join(self._pieces)
        return other_keys(self._started, calls, None if self._after is None else self._after.key(calls), text)

    def key(self, calls: list[Call]) -> str:
        digest = self._hash.copy()
        digest.update(_calls_form(calls, all(call_id for call_id, _, _ in calls)))
        return digest.hexdigest()


def calls_of(message: Mapping[str, Any]) -> list[Call]:
    """The tool calls of an assistant message (an answer, or one a client resends)."""
    calls = message.get("tool_calls")
    out: list[Call] = []
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = orjson.dumps(arguments).decode()  # parsed already: compared as JSON alike
        call_id, name = call.get("id"), function.get("name")
        out.append((call_id if isinstance(call_id, str) else None, name if isinstance(name, str) else None, arguments))
    return out


def message_answer_key(message: Mapping[str, Any]) -> str:
    """`answer_key` of an answer's message (a chat completion's first choice), then its
    `other_keys`."""
    text, calls = text_of(message.get("content")), calls_of(message)
    after = after_thinking(text)
    thought = None if after is None else answer_key(after, calls)
    return CHOICES_SEPARATOR.join([answer_key(text, calls), *other_keys(bool(text.strip()), calls, thought, text)])


def calls_alone_key(calls: list[Call]) -> str | None:
    """The key of an answer's tool calls without its text, when every call has an id (ids are
    drawn at random: they name the answer on their own), else None. An answer of text and calls
    is noted under it too: some clients resend such an answer without its text, or as two
    assistant messages (the text, then the calls)."""
    if not calls or not all(call_id for call_id, _, _ in calls):
        return None
    return answer_key("", calls)


def completion_answer_key(completion: Mapping[str, Any], first: Mapping[str, Any]) -> str:
    """`answer_key` of a chat completion: its first choice's (`first`, its message), and with
    `n` > 1 every other choice's after it (`CHOICES_SEPARATOR`)."""
    key = message_answer_key(first)
    choices = completion.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        return key
    keys = [key]
    for choice in choices[1:]:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            keys.append(message_answer_key(message))
    return CHOICES_SEPARATOR.join(keys)


# A resent answer is evidence enough to join a rewritten history to a run only when it is hard to
# say twice by chance: it carries a tool call (ids are drawn at random) or this much text.
DISTINCT_TEXT = 64


# At most this many short assistant messages are skipped back over to find a rewrite's evidence
# (Aider acknowledges each of its own user messages with an "Ok." it writes itself: three after
# the model's edit in a test reflection).
MAX_SKIPPED_ANSWERS = 8


def _answer_keys(message: dict[str, Any], stops: tuple[str, ...] = ()) -> tuple[tuple[str, ...], bool]:
    text, calls = text_of(message.get("content")), calls_of(message)
    forms = [(text, calls)]
    if not calls:
        written = text_calls(text)  # tool calls a client sends back as text (smolagents)
        if written is not None:
            forms.append(written)
            # smolagents' CodeAgent writes calls of its own making after an answer that had
            # none (the model wrote code): the text alone is what was delivered.
            forms.append((written[0], []))
    for stop in stops:
        for said, called in forms[:]:
            cut = _without_stop(said, stop)
            if cut is not None:
                forms.append((cut, called))
    for said, called in forms[:]:
        after = after_thinking(said)  # a client that wrote the reasoning block back its own way
        if after is not None:
            forms.append((after, called))
    for said, called in forms[:]:
        react = None if called else react_form(said)  # a text ReAct step rebuilt or extended
        if react is not None and (react, called) not in forms:
            forms.append((react, called))
    for said, called in forms[:]:
        if len(called) > 1 and all(call_id for call_id, _, _ in called) and not said.strip():
            forms.append(("", sorted(called, key=_call_order)))  # resent in another order (`other_keys`)
    keys: list[str] = []
    distinctive = False
    for text, calls in forms:
        digest = hashlib.blake2b(text.strip().encode(), digest_size=8)
        with_ids = digest.copy()
        with_ids.update(_calls_form(calls, True))
        digest.update(_calls_form(calls, False))
        keys += [with_ids.hexdigest(), digest.hexdigest()]
        distinctive = distinctive or any(call_id for call_id, _, _ in calls) or len(text.strip()) >= DISTINCT_TEXT
    return tuple(keys), distinctive


def resent_answer(messages: list[dict[str, Any]], stops: tuple[str, ...] = ()) -> tuple[tuple[str, ...], bool] | None:
    """The keys the last assistant message of a history may have been delivered under (with its
    tool-call ids, and without them for an answer whose calls had none; the same for the tool
    calls a client wrote back as text, `resent.text_calls`), and whether it is distinctive
    (`DISTINCT_TEXT`); None when the history has no assistant message. `stops`: the request's
    stop strings, which a client may have written back after the answer (`_without_stop`)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return _answer_keys(message, stops)
    return None


def emptied_answer(messages: list[dict[str, Any]]) -> bool:
    """Whether a history's last assistant message is empty: no text, no tool call (where a
    client dropped the answer it was given and kept the turn: smolagents streaming its outputs,
    after the answer's call raised)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return not message.get("tool_calls") and not text_of(message.get("content")).strip()
    return False


def rewrite_evidence(
    messages: list[dict[str, Any]], last: tuple[tuple[str, ...], bool] | None = None, stops: tuple[str, ...] = ()
) -> tuple[str, ...] | None:
    """The keys of a history's last distinctive assistant message: the answer a rewritten
    history must have been given by its run. Short assistant messages after it are skipped
    (`MAX_SKIPPED_ANSWERS` at most): any run may say them, and a client may write them itself
    (Aider's "Ok."); None when there is no distinctive one among them. `last`: what
    `resent_answer` said of the history's last assistant message, when the caller has it (its
    keys are not made again)."""
    skipped = 0
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        if last is not None:
            (keys, distinctive), last = last, None
        else:
            keys, distinctive = _answer_keys(message, stops)
        if distinctive:
            return keys
        skipped += 1
        if skipped > MAX_SKIPPED_ANSWERS:
            return None
    return None


def called_with_ids(messages: list[dict[str, Any]]) -> str | None:
    """The key of a history's last assistant message when it called tools and every call has
    its id (ids are drawn at random: such an answer was given to one run only), else None."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            calls = calls_of(message)
            if not calls or not all(call_id for call_id, _, _ in calls):
                return None
            return answer_key(text_of(message.get("content")), calls)
    return None


def distinctive_answers(
    messages: list[dict[str, Any]], most: int, stops: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """The keys of a history's distinctive assistant messages, the last first, `most` at most:
    what else a rewritten history says of the run it belongs to."""
    found: list[tuple[str, ...]] = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            keys, distinctive = _answer_keys(message, stops)
            if distinctive:
                found.append(keys)
                if len(found) == most:
                    break
    return found


def last_answer_key(messages: list[dict[str, Any]]) -> str | None:
    """The key of a history's last answer as resent (with its tool-call ids)."""
    resent = resent_answer(messages)
    return resent[0][0] if resent else None
