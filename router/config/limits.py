"""Bounds: on what one client or one upstream can make the gateway hold or wait for, on each
client key's requests and cloud dollars, and on failed key checks."""

from __future__ import annotations

from pydantic import Field

from router.config.base import Strict


class ClientLimit(Strict):
    requests_per_minute: int | None = Field(
        None, ge=1, description="requests per fixed UTC minute, refused ones included; null: no limit"
    )
    cloud_usd_per_day: float | None = Field(
        None, gt=0, description="cloud dollars per UTC day (inner calls included); null: no limit"
    )


class ClientLimitSettings(ClientLimit):
    """Limits per client key (none by default); `keys` overrides them for some keys, named by
    the key itself or by its namespace (the part of its trajectory ids before the ':')."""

    keys: dict[str, ClientLimit] = Field(
        default_factory=dict, description="overrides for some keys, by the key or its namespace"
    )
    # The output a step is reckoned to ask for when it sets no max_tokens: with its prompt, at
    # the cloud's prices, what it holds of its key's cloud_usd_per_day while in flight.
    reserve_output_tokens: int = Field(
        1024,
        ge=0,
        description="output tokens a step without max_tokens is reckoned to cost when it is held against "
        "cloud_usd_per_day before it is sent",
    )


class LimitSettings(Strict):
    """Bounds on what one client or one upstream can make the gateway hold or wait for."""

    # Request line and headers together; over it: 431, before authentication.
    max_header_bytes: int = Field(64 * 1024, ge=1024)
    # From a request's first byte (or the connection's opening) until its headers are complete.
    header_timeout_s: float = Field(10.0, gt=0)
    # From the end of a request's headers until its body is complete; then 408. Extended, up to
    # as long again, while the body waits on the gateway (bytes unread in its socket).
    body_timeout_s: float = Field(30.0, gt=0)
    send_timeout_s: float = Field(
        60.0,
        gt=0,
        description="seconds a client may leave an answer unread once the gateway's send buffer is full; past it "
        "the connection is closed and a streamed step ends as cancelled (counted in "
        "tandem_limit_exceeded_total{limit=send_timeout_s})",
    )
    max_body_bytes_in_flight: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="request body bytes received and not yet read whole by the gateway, across all connections, per "
        "worker process; a body that would pass it gets 503 with Retry-After (a body alone always fits: "
        "max_body_bytes bounds it), counted in tandem_limit_exceeded_total{limit=max_body_bytes_in_flight}",
    )
    max_messages: int = Field(
        10_000,
        ge=1,
        description="messages in one request, after a translated surface's become chat messages; more: 400 "
        "array_above_max_length (each costs the step's bookkeeping time, whatever its size)",
    )
    # Nesting of a request's JSON body; deeper: 400 at parse time.
    max_json_depth: int = Field(128, ge=2, le=254)  # orjson re-serialises no deeper than 254
    # Bytes held to parse a trajectory's next body from its last (only the new messages are
    # parsed; router/protocol/prefix.py); least recently used dropped first; 0: parse every body whole.
    reuse_parse_bytes: int = Field(16 * 1024 * 1024, ge=0)
    # An upstream's whole answer, plain or streamed; over it: 502, or an error event mid-stream.
    max_answer_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    # One server-sent event (its data line) of an upstream stream; over it: an error event.
    max_sse_line_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    max_idle_connections: int = Field(
        1000,
        ge=1,
        description="kept-alive client connections waiting for their next request, per worker process; past it "
        "the longest idle are closed (counted in tandem_limit_exceeded_total{limit=max_idle_connections})",
    )


class AuthThrottleSettings(Strict):
    """Failed key checks (client or admin API keys) counted per client address: past
    `max_failures` within `window_s`, the address's requests get 429 for `window_s`."""

    max_failures: int = Field(
        20, ge=0, description="failed key checks from one client address in window_s before it is refused; 0: off"
    )
    window_s: float = Field(
        60.0, gt=0, description="seconds the failures are counted over, and how long an address is then refused"
    )
