"""Serving: the HTTP server, the operator's view, and model-name aliases."""

from __future__ import annotations

from pydantic import Field, IPvAnyNetwork

from router.config.base import Strict


class UISettings(Strict):
    """The operator's view at /ui."""

    # The operator's view (/ui): read-only pages of recent trajectories and one run's steps.
    # Off by default; refused while no admin key is configured (the sign-in is an admin key).
    enabled: bool = False
    # How long a sign-in cookie from the login form lasts.
    session_s: float = Field(8 * 3600.0, gt=0)
    secure_cookie: bool = Field(
        False,
        description="Always mark the sign-in cookie Secure (sent over HTTPS only). Without it the cookie is Secure "
        "when the request came over HTTPS: to the gateway itself, or through a proxy in server.trusted_proxies "
        "that says so in X-Forwarded-Proto. Set it when TLS ends at a proxy not listed there.",
    )
    max_sessions: int = Field(
        10_000,
        ge=1,
        description="Sign-in sessions kept per process when there is no Redis (the oldest signed out first).",
    )


class KeptResponseSettings(Strict):
    """Responses kept for `previous_response_id` (`POST /v1/responses`, `GET` and `DELETE
    /v1/responses/{id}`)."""

    enabled: bool = Field(
        True,
        description="Keep each Responses answer whose request does not say `store: false`, so that a later "
        "request can name it in `previous_response_id` instead of resending the conversation. Never on a route "
        "whose privacy mode protects values (redact, keep_local, block): it would keep the originals at rest.",
    )
    ttl_s: float = Field(
        3600.0,
        gt=0,
        description="How long a kept response can be named (and read) after its conversation's latest turn was "
        "answered (each turn kept renews the turns before it). A client that resends the whole conversation, "
        "sending back the answers' items as given, has it kept once; one that rewrites it at every step has it "
        "kept once per step for this long, unless it sends `store: false` (Codex does).",
    )
    memory_bytes: int = Field(
        64 * 1024 * 1024,
        ge=0,
        description="Bytes of kept responses one process holds (the least recently kept or continued go "
        "first): all of them without Redis; with Redis (where every replica reads them) a copy of its own, so "
        "that their conversations go on through a Redis outage.",
    )


class ServerSettings(Strict):
    """The HTTP server; `--host`, `--port` and `--workers` override these."""

    host: str = Field("127.0.0.1", description="address to bind")
    port: int = Field(8080, ge=0, le=65535, description="port to bind")
    workers: int = Field(1, ge=1, description="processes; above 1 needs redis_url")
    # After SIGTERM: no new connections; in-flight steps (long streams too) get this long to
    # finish and be recorded before the process stops. Keep it below the orchestrator's grace.
    shutdown_timeout_s: int = Field(60, ge=1)
    # How long an idle keep-alive connection stays open. Longer than the clients' own idle
    # expiry (httpx, so the openai SDK: 5 s; aiohttp 15 s) and a load balancer's (60 s), so
    # that the client, not the server, closes an idle connection: when both close at once, a
    # request sent in that instant meets a closed connection and gets no answer.
    keep_alive_s: int = Field(65, ge=1)
    trusted_proxies: list[IPvAnyNetwork] = Field(
        default_factory=list,
        description="Addresses (CIDRs, e.g. 10.0.0.0/8) of the reverse proxies in front of the gateway whose "
        "X-Forwarded-* headers it believes; from any other peer those headers are ignored. Empty: none.",
    )
    insecure_open_proxy: bool = Field(
        False,
        description="let `tandem serve` bind a non-loopback address (0.0.0.0, ::, a LAN address) with no "
        "client keys while an upstream's key is set, so that anyone who reaches the port spends that key; "
        "off: such a start is refused (exit 2). `--insecure-open-proxy` sets it for one start",
    )
    access_log: bool = Field(
        False, description="log one line per HTTP request (uvicorn's access log); `--access-log` sets it"
    )


class ModelAlias(Strict):
    """Client model names matching a pattern (`claude-*`) served by a route; `models` are the
    concrete names `/v1/models` lists for it, so that a client's discovery finds them."""

    route: str = Field(description="the route that serves matching model names")
    models: list[str] = Field(default_factory=list, description="names GET /v1/models lists for this alias")
