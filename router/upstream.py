"""The configured upstreams: a chat completion sent, its answer checked, each failure said as
one `UpstreamFailure` of a known kind.

Each upstream is called through one `Transport` (router/transport: a pooled keep-alive client,
chosen per upstream by router/transport/choose.py: the gateway's own lean HTTP/1.1 client for
http://, aiohttp for https://, or what its `client` setting names). Not httpx: its connection
pool is slow under concurrency (see docs/performance.md and benchmarks/overhead/README.md), and
this is the hot path of every step.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from router.deadlines import Deadlines
from router.errors import error_body
from router.protocol.completion_shape import completion_problem
from router.protocol.upstream_error import read_error
from router.stream_source import StreamSource, bare_cr_lines
from router.transport import ConnectFailed, InvalidAnswer, Request, Response, Sent, Transport, TransportError
from router.transport.choose import Egress, egress_for, transport_for
from router.upstream_probe import UpstreamState, probe

if TYPE_CHECKING:
    from router.config.limits import LimitSettings
    from router.config.upstream import UpstreamSettings

# Statuses after which the other target may still answer the step.
RETRYABLE_STATUSES = frozenset({429}) | frozenset(range(500, 600))
# What an upstream answers when the gateway's own settings are wrong (its key, its model).
GATEWAY_REFUSED = frozenset({401, 403, 404})
QUOTED_BYTES = 200
# Where a quote cut short ends: back to a character no e-mail address, key or number goes on
# through (a space, a quote, JSON's punctuation), so that no value is kept in part, past the
# finding of the privacy stage that masks the quote on a sensitive route.
_CUT_WORD = re.compile(rb"[^\s\"'`,;<>()\[\]{}]+$")


class UpstreamFailure(Exception):
    """The upstream did not answer usefully before its first byte reached the client.

    `kind` is one of: connect, timeout, disconnected, status, invalid_answer (a 2xx whose body
    is an error object or not JSON, a streamed answer that is no event stream, a redirect, or
    bytes that are not a valid HTTP answer).
    With `status`, the upstream's own status, body and Retry-After are kept so that they can be
    relayed unchanged.
    """

    def __init__(
        self,
        upstream: str,
        kind: str,
        detail: str,
        *,
        status: int | None = None,
        body: bytes = b"",
        content_type: str = "application/json",
        retry_after: str | None = None,
    ) -> None:
        super().__init__(f"{upstream}: {kind}: {detail}")
        self.upstream = upstream
        self.kind = kind
        self.detail = detail
        self.status = status
        self.body = body
        self.content_type = content_type
        self.retry_after = retry_after


@dataclass(slots=True)
class UpstreamReply:
    status: int
    content_type: str
    body: bytes = b""
    stream: StreamSource | None = None
    first_byte_s: float = 0.0
    answer: Any = None  # a 2xx plain answer, parsed once (a JSON object)


class Upstream:
    def __init__(
        self,
        name: str,
        settings: UpstreamSettings,
        limits: LimitSettings,
        on_limit: Callable[[str], None],
        transport: Transport | None = None,
        on_call: Callable[[float], None] | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.limits = limits
        self.on_limit = on_limit  # counts a bound of `limits` cutting an answer off
        # Counts every call sent (`tandem_upstream_calls_total`): the denominator of a share of
        # failed calls, inner calls and each replica of a pool included.
        self._on_call = on_call
        self.drop_params = frozenset(settings.drop_params)
        self._url = f"{settings.base_url}/chat/completions"
        key = settings.api_key()
        # A configured key source that yields no key: every call goes without one (say why).
        self.key_missing = missing_key(settings) if key is None else None
        self._headers = {"Content-Type": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._stream_headers = {**self._headers, "Accept": "text/event-stream", "Accept-Encoding": "identity"}
        # The trajectory id goes in this header, when one is configured (a session-affine router).
        self._trajectory_header = settings.trajectory_header
        # How calls leave for it (client, proxy, trust), checked now: a bad CA file or proxy
        # variable stops the gateway at start-up.
        self.egress: Egress = egress_for(settings, name)
        # A transport given here (the in-process tests' scripted one) is used instead of a pool.
        self._transport: Transport | None = transport
        self._state: UpstreamState | None = None
        # Every call waits for its first byte at most `timeouts.first_byte`: one timer for all.
        self._first_byte = Deadlines(settings.timeouts.first_byte)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def transport(self) -> Transport | None:
        """The pooled transport, once started (the edge pool reads its replicas' metrics with it)."""
        return self._transport

    async def start(self) -> None:
        if self._transport is None:
            self._transport = transport_for(self.settings, self.egress)

    async def close(self) -> None:
        if self._transport is not None:
            await self._transport.close()
            self._transport = None

    async def send(self, body: bytes, stream: bool, sent: Sent | None = None, trajectory_id: str = "") -> UpstreamReply:
        """POST a chat completion; return once the first byte of the answer is here. `sent`
        (optional) is awaited once the request is on its way, while the upstream reads it; what
        it raises gives the call up, and it runs within the first-byte timeout. `trajectory_id`
        goes in the upstream's `trajectory_header`, where it has one."""
        assert self._transport is not None, "Upstream.start() was not awaited"
        timeouts = self.settings.timeouts
        started = time.perf_counter()
        if self._on_call is not None:
            self._on_call(1.0)
        response: Response | None = None
        try:
            async with self._first_byte.within():
                response = await self._post(body, stream, sent, trajectory_id)
                if not 200 <= response.status < 600:
                    raise self._nonsense_status(response)
                if 300 <= response.status < 400:
                    raise self._redirected(response)
                if response.status >= 400 or not stream:
                    payload = await self._read_bounded(response)
                    response.release()
                    self._check_status(response, payload)
                    return UpstreamReply(
                        status=response.status,
                        content_type=response.headers.get("Content-Type", "application/json"),
                        body=payload,
                        first_byte_s=time.perf_counter() - started,
                        answer=self._answer_of(response.status, payload),
                    )
                first = await response.read_some()
                # Comments alone (`: keep-alive`, a router's `: PROCESSING`) are no answer yet:
                # the first-byte timeout still runs (a stream of nothing but keep-alives held
                # its step for the whole `timeouts.stream` and never failed over).
                while first and len(first) < _COMMENTS_HELD and _comments_alone(first):
                    more = await response.read_some()
                    if not more:
                        break
                    first += more
                bare_cr = bare_cr_lines(first)
                if bare_cr:
                    first = first.replace(b"\r", b"\n")
                if first and not _is_event_stream(response.headers.get("Content-Type"), first):
                    raise self._not_a_stream(response, first)
                if first and _begins_with_error(first):
                    # Nothing has reached the client: the step may still fail over.
                    response.close()
                    raise UpstreamFailure(
                        self.name,
                        "invalid_answer",
                        f"HTTP {response.status}: its stream began with an error event in place of "
                        f"its answer: {quoted(first)}",
                    )
                if first and _first_event_unreadable(first):
                    response.close()
                    raise UpstreamFailure(
                        self.name,
                        "invalid_answer",
                        f"HTTP {response.status}: its stream's first event is not a JSON object: {quoted(first)}",
                    )
        except TimeoutError as exc:
            self._abort(response)
            raise UpstreamFailure(self.name, "timeout", f"no answer within {timeouts.first_byte:g} s") from exc
        except ConnectFailed as exc:
            raise UpstreamFailure(self.name, "connect", str(exc)) from exc
        except InvalidAnswer as exc:
            self._abort(response)
            raise UpstreamFailure(self.name, "invalid_answer", str(exc)) from exc
        except TransportError as exc:
            self._abort(response)
            raise UpstreamFailure(self.name, "disconnected", str(exc)) from exc
        except UpstreamFailure:
            raise
        except BaseException:
            # Cancellation (the client went away) must not leave the connection generating.
            self._abort(response)
            raise
        if not first:
            response.close()
            raise UpstreamFailure(self.name, "disconnected", "the stream ended before any data")
        return UpstreamReply(
            status=response.status,
            content_type=response.headers.get("Content-Type", "text/event-stream"),
            stream=StreamSource(response, first, timeouts.idle, self.limits, self.on_limit, timeouts.stream, bare_cr),
            first_byte_s=time.perf_counter() - started,
        )

    async def _post(self, body: bytes, stream: bool, sent: Sent | None, trajectory_id: str = "") -> Response:
        transport = self._transport
        assert transport is not None
        headers = self._stream_headers if stream else self._headers
        if self._trajectory_header is not None and trajectory_id:
            # Trajectory ids are of header-safe characters only (router/trajectory/identify.py).
            headers = {**headers, self._trajectory_header: trajectory_id}
        return await transport.send(Request("POST", self._url, headers, body, sent))

    def _nonsense_status(self, response: Response) -> UpstreamFailure:
        # A final status outside HTTP's 2xx-5xx (600, 999, 000…) is a broken upstream, not a
        # status to relay: no client (nor the server answering it) knows what it means.
        response.close()
        return UpstreamFailure(
            self.name, "invalid_answer", f"HTTP {response.status} is not a status an answer can have"
        )

    def _redirected(self, response: Response) -> UpstreamFailure:
        # A redirect is not followed: a POST sent again elsewhere (or turned into a GET, as
        # 301 and 302 are by browsers) is not the step the agent asked for, and a base URL that
        # redirects is a setting to mend, said plainly.
        response.close()
        location = response.headers.get("Location", "")
        return UpstreamFailure(
            self.name,
            "invalid_answer",
            f"HTTP {response.status}: the upstream redirects to {location!r}; set its base_url to the final address",
        )

    def _not_a_stream(self, response: Response, first: bytes) -> UpstreamFailure:
        # A whole JSON answer (an upstream that ignores `stream`) or a page of HTML, relayed, would
        # be lines no client reads as events; before the first byte, the step may still fail over.
        response.close()
        kind = response.headers.get("Content-Type") or "none"
        return UpstreamFailure(
            self.name,
            "invalid_answer",
            f"HTTP {response.status} to a streamed request is not an event stream "
            f"(Content-Type {kind}): {quoted(first)}",
        )

    async def _read_bounded(self, response: Response) -> bytes:
        """The whole answer, refused (502) as soon as it passes `limits.max_answer_bytes`."""
        limit = self.limits.max_answer_bytes
        declared = response.content_length
        if declared is not None and declared > limit:
            raise self._too_large(response, declared)
        parts: list[bytes] = []
        size = 0
        while part := await response.read_some():
            size += len(part)
            if size > limit:
                raise self._too_large(response, size)
            parts.append(part)
        return b"".join(parts)

    def _too_large(self, response: Response, size: int) -> UpstreamFailure:
        # Dropping the connection stops the upstream sending the rest.
        response.close()
        self.on_limit("max_answer_bytes")
        limit = self.limits.max_answer_bytes
        detail = f"an answer of {size} bytes or more, over the limit of {limit} bytes (limits.max_answer_bytes)"
        body = error_body(f"the {self.name} upstream sent {detail}", "upstream_error", "answer_too_large")
        return UpstreamFailure(self.name, "too_large", detail, status=502, body=body)

    def _check_status(self, response: Response, payload: bytes) -> None:
        if response.status in GATEWAY_REFUSED:
            raise self._refused(response.status, payload)
        if response.status in RETRYABLE_STATUSES:
            raise UpstreamFailure(
                self.name,
                "status",
                f"HTTP {response.status}",
                status=response.status,
                body=payload,
                content_type=response.headers.get("Content-Type", "application/json"),
                retry_after=_retry_after(response.headers.get("Retry-After")),
            )

    def _refused(self, status: int, payload: bytes) -> UpstreamFailure:
        """A 401 or 403 (the upstream refuses the gateway's key) or a 404 (no such model or path
        there): the gateway's settings, not the client's request, are wrong. Relayed, a 401 would
        tell the client its own key is bad. A failure of that upstream: failed over where the
        route allows it, else a 502 that says which setting to mend."""
        if status == 404:
            said = read_error(status, payload)["message"][:QUOTED_BYTES]
            setting = f"upstreams.{self.name}.model ({self.model!r}) and base_url"
            detail = f"HTTP 404: the upstream has no such model or path ({said!r}); check {setting}"
            code = "upstream_model_not_found"
        else:
            # Its message is not quoted: providers quote part of the key they refused.
            setting = f"upstreams.{self.name}.api_key_env or api_key_file"
            detail = f"HTTP {status}: the upstream refused the gateway's key; check {setting}"
            code = "upstream_auth_failed"
        body = error_body(f"the {self.name} upstream answered {detail}", "upstream_error", code)
        return UpstreamFailure(self.name, "status", detail, status=502, body=body)

    def _answer_of(self, status: int, payload: bytes) -> Any:
        """A 2xx answer parsed; one that is not a JSON object, or is an error object, is a
        failure of the upstream (some providers answer errors with 200), not an answer."""
        if status >= 300:
            return None
        try:
            answer = orjson.loads(payload)
        except orjson.JSONDecodeError:
            answer = None
        if isinstance(answer, dict) and answer.get("error") is None:
            problem = completion_problem(answer)
            if problem is None:
                return answer
            raise UpstreamFailure(
                self.name, "invalid_answer", f"HTTP {status} with a body that is not a chat completion: {problem}"
            )
        detail = "an error object" if isinstance(answer, dict) else "not a JSON object"
        raise UpstreamFailure(
            self.name, "invalid_answer", f"HTTP {status} with a body that is {detail}: {quoted(payload)}"
        )

    @staticmethod
    def _abort(response: Response | None) -> None:
        if response is not None:
            response.close()

    async def probe(self, cache_s: float = 2.0) -> UpstreamState:
        """Whether the upstream answers HTTP at all (router/upstream_probe.py), asked at most
        once every `cache_s`."""
        now = time.monotonic()
        if self._state is not None and now - self._state.checked_at < cache_s:
            return self._state
        assert self._transport is not None
        timeout_s = min(2.0, self.settings.timeouts.connect)
        state = await probe(self._transport, self.settings.base_url, self._headers, timeout_s)
        if self.key_missing is not None:
            state.key_missing = True
            state.detail = f"{state.detail}; no key: {self.key_missing}"
        self._state = state
        return state


def missing_key(settings: UpstreamSettings) -> str | None:
    """Why the upstream's configured key is not there (None when none is configured)."""
    if settings.api_key_file is not None:
        return f"api_key_file {settings.api_key_file} is empty"
    if settings.api_key_env is not None:
        return f"the environment variable {settings.api_key_env} (api_key_env) is not set"
    return None


# The media types of a whole answer, never of an event stream.
_NOT_EVENTS = ("application/json", "text/html")


def _is_event_stream(content_type: str | None, first: bytes) -> bool:
    """Whether a streamed answer's first bytes may begin server-sent events: not when they begin
    a JSON value or an HTML page, nor when the upstream declares JSON or HTML (an upstream that
    declares no type, or another one, is read by its bytes)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _NOT_EVENTS or media.endswith("+json"):
        return False
    head = first.lstrip(b" \t\r\n\xef\xbb\xbf")
    if head[:1] in (b"{", b"[", b"<"):
        return False
    # The first line is a field of an event (or the start of one: a short first read), and the
    # first event is no error object in place of the answer (before the first byte reaches the
    # client, the step may still fail over).
    newline = head.find(b"\n")
    line = (head if newline < 0 else head[:newline]).rstrip(b"\r")
    return not line or any(line.startswith(field) or field.startswith(line) for field in _FIELDS)


# The fields an event stream's lines begin with (`:` a comment).
_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")
# An error object in place of a chunk: OpenAI's `{"error": …}`, vLLM's `{"object": "error", …}`.
_ERROR_EVENT = re.compile(rb'(?:\xef\xbb\xbf)?\s*data:\s*\{\s*(?:"error"\s*:|"object"\s*:\s*"error")')


# The comments held while waiting for a stream's first event (a bound, so that an upstream
# spilling comments cannot grow what is held): past it, the stream is taken as begun.
_COMMENTS_HELD = 64 * 1024


def _comments_alone(head: bytes) -> bool:
    """Whether a stream's bytes so far are whole lines of comments (or blank lines) only."""
    if not head.endswith(b"\n"):
        return False
    return all(not line.strip() or line.startswith(b":") for line in head.split(b"\n"))


def _begins_with_error(first: bytes) -> bool:
    """Whether a stream's first event is an error in place of its answer."""
    return _ERROR_EVENT.match(first) is not None


def _first_event_unreadable(first: bytes) -> bool:
    """Whether a stream's first event, whole in its first bytes, holds data that is neither a
    JSON object nor `[DONE]` (a broken server's, or a page in an event stream's clothes). An
    event not yet whole is not judged: the relay meets it as it comes."""
    text = first.replace(b"\r\n", b"\n") if b"\r" in first else first
    start, end = 0, text.find(b"\n\n")
    while end >= 0:
        lines = text[start:end].split(b"\n")
        data = [line[5:].strip() for line in lines if line.startswith(b"data:")]
        if data:
            if data[0] == b"[DONE]":
                return False
            # Read as the relay reads it (each data line a chunk; a marker ending the event's
            # last line) or as SSE joins an event's lines: unreadable only when neither is an
            # object.
            joined = b"\n".join(line for line in data if line != b"[DONE]")
            return not (_is_object(data[0]) or _is_object(joined))
        # An event of comments or fields alone (`: keep-alive`, `retry: 1000`): the next one.
        start, end = end + 2, text.find(b"\n\n", end + 2)
    return False


def _is_object(payload: bytes) -> bool:
    try:
        return isinstance(orjson.loads(payload), dict)
    except orjson.JSONDecodeError:
        return False


def quoted(payload: bytes) -> str:
    """The first bytes of a bad answer, as an error quotes them (cut after a whole word)."""
    if len(payload) <= QUOTED_BYTES:
        return repr(payload)
    return f"{_CUT_WORD.sub(b'', payload[:QUOTED_BYTES])!r}…"


# An upstream's Retry-After is relayed to the client only in a form the client can read: whole
# seconds, at most a day (an SDK sleeps for what it is told), or an HTTP date.
_MAX_RETRY_AFTER = 86400


def _retry_after(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return str(min(int(value), _MAX_RETRY_AFTER)) if len(value) <= 12 else str(_MAX_RETRY_AFTER)
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return value
