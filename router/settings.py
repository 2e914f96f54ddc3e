"""Configuration: a YAML file plus `TANDEM_…` environment variables (nested with `__`).

Precedence, highest first: values passed in code, environment variables, the YAML file,
the embedded defaults. The embedded defaults describe a single machine: the edge at vLLM's
default local port, the cloud at OpenAI with the key from `OPENAI_API_KEY`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, IPvAnyNetwork, SecretStr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from router.config_errors import describe
from router.ledger import PromptCacheRules
from router.policies.fixed import CloudRoute, EdgeRoute
from router.policies.random import RandomRoute
from router.policies.registry import RouteSettings

TARGETS = ("edge", "cloud")


class ConfigError(Exception):
    """The configuration cannot be used; the message names the key and the problem."""


class _Strict(BaseModel):
    # A misspelt key in a config file is a mistake to report, not to ignore silently.
    model_config = ConfigDict(extra="forbid")


class TierPrices(_Strict):
    """Dollars per million tokens. `cached_input` defaults to `input` when not given."""

    input: float = Field(0.0, ge=0, description="dollars per million prompt tokens not read from a cache")
    cached_input: float | None = Field(None, ge=0, description="dollars per million cached prompt tokens (null: input)")
    output: float = Field(0.0, ge=0, description="dollars per million completion tokens")

    @property
    def cached_input_or_input(self) -> float:
        return self.input if self.cached_input is None else self.cached_input


class LongContextPrices(TierPrices):
    """Prices that apply instead when a step's prompt is over `above_prompt_tokens`."""

    above_prompt_tokens: int = Field(..., ge=1, description="steps with more prompt tokens use these prices")


class Prices(TierPrices):
    long_context: LongContextPrices | None = None

    def tier(self, prompt_tokens: int) -> TierPrices:
        if self.long_context is not None and prompt_tokens > self.long_context.above_prompt_tokens:
            return self.long_context
        return self


class Timeouts(_Strict):
    """Seconds. `first_byte` bounds the wait for the upstream's first byte of the answer
    (a non-streamed answer is all first byte); `idle` bounds each gap between stream chunks;
    `stream` bounds a whole streamed answer from its first byte (past it, the stream ends with
    an error event), so that an upstream dripping a byte now and then cannot hold it open."""

    connect: float = Field(5.0, gt=0, description="seconds to open a connection")
    first_byte: float = Field(120.0, gt=0, description="seconds until the first byte of the answer")
    idle: float = Field(60.0, gt=0, description="longest gap between stream chunks, seconds")
    stream: float = Field(
        600.0,
        gt=0,
        description="seconds a streamed answer may last from its first byte, however steadily it arrives; "
        "past it the stream ends with an error event (upstream_stream_timeout) and the step is recorded as an error",
    )


class PoolSettings(_Strict):
    """How the edge's replicas (`endpoints`) share its steps (router/edge_pool.py)."""

    load_bound: float = Field(
        1.25,
        ge=1.0,
        description="affinity: a replica holding more than this × the mean of steps in flight (rounded up) is "
        "passed over for a new home, and a run's step spills from a home over it",
    )
    rehome_after_s: float = Field(
        5.0, ge=0, description="affinity: a run re-homes once its home has stayed over load_bound this long (seconds)"
    )
    breaker_failures: int = Field(
        3, ge=1, description="failures in a row (connect, timeout, dropped, 5xx) that take a replica out of the pool"
    )
    breaker_s: float = Field(10.0, gt=0, description="seconds a replica stays out before it is tried again")
    scrape_interval_s: float = Field(
        1.0,
        ge=0,
        description="seconds between two reads of each replica's own load (vLLM's /metrics: requests running and "
        "waiting, KV-cache usage, prefix-cache hits), in the background; 0: not read (no route can then find "
        "the pool full)",
    )
    metrics_path: str = Field("/metrics", pattern=r"^/", description="where on each replica's host its metrics are")


def _http_url(url: str, key: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{key} must start with http:// or https://, got {url!r}")
    return url.rstrip("/")


class UpstreamSettings(_Strict):
    """One OpenAI-compatible endpoint."""

    base_url: str = Field(
        description="OpenAI-compatible base URL, http(s)://…/v1 (with endpoints: may be left out, the first of them)"
    )
    endpoints: list[str] = Field(
        default_factory=list,
        description="edge only: the base URLs of several replicas (vLLM servers) of one model, each with its own "
        "connections, health and load; the edge becomes a pool that `balance` places steps on, failing over "
        "inside it before the cloud. Empty: the one base_url",
    )
    balance: Literal["affinity", "least_loaded", "round_robin"] = Field(
        "affinity",
        description="with endpoints: affinity keeps each trajectory on one replica (its prefix is cached there), "
        "with a bound on load; least_loaded picks the replica with the fewest steps in flight and queued; "
        "round_robin takes them in turn",
    )
    pool: PoolSettings = Field(PoolSettings(), description="with endpoints: load bound, re-homing, breaker")
    trajectory_header: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$",
        description="a header that carries the step's trajectory id to this upstream (its inner calls too), for a "
        "router in front of the replicas that keeps a session on one of them, e.g. vLLM production-stack's "
        "--routing-logic session --session-key <this name>; null: not sent. Do not set it on an upstream that "
        "must not learn the ids",
    )
    model: str = Field(description="model name sent upstream")
    api_key_env: str | None = Field(None, description="variable holding the key (read at start-up, never logged)")
    api_key_file: Path | None = Field(None, description="file holding the key (read at start-up, never logged)")
    timeouts: Timeouts = Timeouts()
    prices: Prices = Field(Prices(), description="dollars per million tokens: input, cached_input, output")
    drop_params: list[str] = Field(default_factory=list, description="request keys removed before this upstream")
    # Added to every inner call (probe, judge, verifier, summary…) sent to this upstream, e.g.
    # `{chat_template_kwargs: {enable_thinking: false}}` so that a thinking model on vLLM answers
    # a one-token probe or an eight-token verdict without starting with <think>.
    inner_call_params: dict[str, Any] = Field(default_factory=dict)
    max_connections: int = Field(512, ge=1, description="keep-alive connection pool size towards this upstream")
    # The provider's prompt-cache rules, used to price the all-cloud counterfactual (cloud
    # upstream only; null: the provider caches nothing). Defaults: OpenAI's automatic caching.
    prompt_cache: PromptCacheRules | None = PromptCacheRules()

    @model_validator(mode="before")
    @classmethod
    def _first_endpoint(cls, data: Any) -> Any:
        # The first replica stands for the pool where one URL is asked for (probes, inner calls).
        if isinstance(data, dict) and not data.get("base_url") and data.get("endpoints"):
            first = data["endpoints"][0]
            if isinstance(first, str):
                return {**data, "base_url": first}
        return data

    @model_validator(mode="after")
    def _check_url(self) -> UpstreamSettings:
        self.endpoints = [_http_url(url, "each of endpoints") for url in self.endpoints]
        if len(set(self.endpoints)) != len(self.endpoints):
            raise ValueError("endpoints lists a base URL twice")
        self.base_url = _http_url(self.base_url, "base_url")
        if self.endpoints and self.base_url not in self.endpoints:
            raise ValueError(f"base_url {self.base_url!r} is not one of endpoints; leave it out with endpoints")
        return self

    def api_key(self) -> str | None:
        """The key, read at start-up from the named variable or file; never logged."""
        if self.api_key_file is not None:
            try:
                return self.api_key_file.read_text().strip() or None
            except OSError as exc:
                raise ConfigError(f"api_key_file {self.api_key_file}: {exc.strerror}") from exc
        if self.api_key_env is not None:
            return os.environ.get(self.api_key_env) or None
        return None


class TrajectorySettings(_Strict):
    """How trajectories are kept, closed and identified."""

    # A trajectory with no step for this long is closed and its per-run figures recorded.
    idle_close_s: float = Field(1800.0, gt=0)
    # How long a trajectory's state is kept after its last step (memory and Redis).
    ttl_s: float = Field(7 * 24 * 3600.0, gt=0)
    # Trajectories kept in memory (their totals, notes and pins; records are bounded below).
    max_in_memory: int = Field(20_000, ge=1)
    # Step records the in-memory store keeps, packed (~300 bytes each, more with features): all
    # trajectories' together, and one trajectory's; past it the least recently recorded lose theirs.
    record_bytes: int = Field(128 * 1024 * 1024, ge=0)
    trajectory_record_bytes: int = Field(
        4 * 1024 * 1024, ge=0, description="step records the memory store keeps for one trajectory (its first stay)"
    )
    # Last-resort identification by message history when a request carries no session id.
    stitch_by_history: bool = True
    # Steps counted during a Redis outage whose writes (the step, its record, notes…) are kept for
    # write-back; past this many, new writes are dropped and counted
    # (tandem_store_outage_dropped_total). A kept step takes ~1.3 KB of memory (more with big notes).
    outage_journal_max: int = Field(100_000, ge=1)
    outage_journal_dir: Path | None = Field(
        None,
        description="Folder where each worker also keeps the outage journal on disk (one locked file a worker, "
        "sealed with a key derived from the vault key), so that a worker stopped mid-outage (SIGKILL, SIGTERM, "
        "a crash) loses no answered step: the next start on the folder writes it back. Put it on a persistent "
        "volume; null: in memory only.",
    )
    outage_journal_max_bytes: int = Field(
        256 * 1024 * 1024,
        ge=64 * 1024,
        description="Bytes one worker's journal file may hold; past it new writes stay in memory only, counted "
        'in tandem_journal_lost_total{reason="file_full"} and logged.',
    )
    outage_journal_sync_ms: float = Field(
        5.0,
        ge=0,
        le=1000,
        description="Group commit: the journal file is synced at most this often (milliseconds); an answer given "
        "during an outage waits for the sync that covers its step.",
    )
    # Trajectory ids kept in Redis' `recent` index (listing, export); the oldest leave first.
    max_listed: int = Field(1_000_000, ge=1)


class ClientLimit(_Strict):
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


class UISettings(_Strict):
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


class AuditSettings(_Strict):
    """The audit log: one JSON line per step, written off the request path."""

    mode: Literal["off", "metadata", "content"] = Field(
        "off", description="metadata: the step record; content: also what the cloud received and answered"
    )
    path: Path = Field(Path("tandem-audit.jsonl"), description="the log file")
    max_bytes: int = Field(100 * 1024 * 1024, ge=1024, description="the file rotates at this size")
    backups: int = Field(5, ge=0, description="rotated files kept")
    # Memory of the lines waiting for the writer (while a disk is full, say): they wait
    # serialised and count as the bytes they hold, the batch being retried included; beyond it
    # new lines are dropped and counted (tandem_audit_lines{outcome="dropped"}).
    max_queue_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    # Content mode: the last input of each open trajectory kept to write the next as a delta.
    delta_memory_bytes: int = Field(64 * 1024 * 1024, ge=0)


class VaultSettings(_Strict):
    """The privacy vault: the original values behind placeholders, sealed."""

    # The environment variable holding the key that seals the privacy vault's originals
    # (32 bytes, base64); required when redis_url is set (router/privacy/vault.py).
    key_env: str = "TANDEM_VAULT_KEY"
    # Per process: what the privacy stage learned of each trajectory's messages (their redacted
    # form, the vault opened), so a step costs its new messages, not its history (bytes).
    memory_bytes: int = Field(64 * 1024 * 1024, ge=0)


class LimitSettings(_Strict):
    """Bounds on what one client or one upstream can make the gateway hold or wait for."""

    # Request line and headers together; over it: 431, before authentication.
    max_header_bytes: int = Field(64 * 1024, ge=1024)
    # From a request's first byte (or the connection's opening) until its headers are complete.
    header_timeout_s: float = Field(10.0, gt=0)
    # From the end of a request's headers until its body is complete; then 408.
    body_timeout_s: float = Field(30.0, gt=0)
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


class ServerSettings(_Strict):
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


class AuthThrottleSettings(_Strict):
    """Failed key checks (client or admin API keys) counted per client address: past
    `max_failures` within `window_s`, the address's requests get 429 for `window_s`."""

    max_failures: int = Field(
        20, ge=0, description="failed key checks from one client address in window_s before it is refused; 0: off"
    )
    window_s: float = Field(
        60.0, gt=0, description="seconds the failures are counted over, and how long an address is then refused"
    )


def _default_upstreams() -> dict[str, UpstreamSettings]:
    return {
        "edge": UpstreamSettings(
            base_url="http://127.0.0.1:8000/v1",
            model="Qwen/Qwen3.5-9B",
            prices=Prices(input=0.10, cached_input=0.10, output=0.15),
        ),
        "cloud": UpstreamSettings(
            base_url="https://api.openai.com/v1",
            model="gpt-5.4",
            api_key_env="OPENAI_API_KEY",
            prices=Prices(input=2.50, cached_input=0.25, output=15.00),
        ),
    }


def _default_routes() -> dict[str, RouteSettings]:
    # EdgeWise: about 40% of steps on the cloud matched cloud-only accuracy.
    return {"tandem": RandomRoute(strategy="random", p=0.4)}


class ModelAlias(_Strict):
    """Client model names matching a pattern (`claude-*`) served by a route; `models` are the
    concrete names `/v1/models` lists for it, so that a client's discovery finds them."""

    route: str = Field(description="the route that serves matching model names")
    models: list[str] = Field(default_factory=list, description="names GET /v1/models lists for this alias")


class Settings(BaseSettings):
    """Everything Tandem reads at start-up."""

    model_config = SettingsConfigDict(env_prefix="TANDEM_", env_nested_delimiter="__", extra="forbid", yaml_file=None)

    # OpenAI-compatible endpoints by name; `edge` and `cloud` are the two roles, both required.
    upstreams: dict[str, UpstreamSettings] = Field(default_factory=_default_upstreams)
    routes: dict[str, Annotated[RouteSettings, Field(discriminator="strategy")]] = Field(
        default_factory=_default_routes,
        description="model names clients ask for, each bound to a strategy and its settings (see below)",
    )
    # The route that answers model names no route claims; none means 404.
    unknown_model_route: str | None = None
    # fnmatch patterns of client model names -> routes, tried in order after the exact route
    # names and before unknown_model_route.
    model_aliases: dict[str, ModelAlias] = Field(default_factory=dict)
    # When set, every request needs `Authorization: Bearer <one of these>`.
    client_api_keys: list[SecretStr] = Field(default_factory=list)
    client_api_keys_file: Path | None = Field(None, description="a file of accepted client keys, one a line")
    # Whether `x-tandem-target: edge|cloud` on a request may force the target.
    allow_target_header: bool = True
    max_body_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="request body size limit; larger: 413")
    limits: LimitSettings = LimitSettings()
    # Seconds a client is told to wait (Retry-After) when no upstream could answer.
    retry_after_s: int = Field(5, ge=0)
    # Keys that may read every trajectory; when set, the trajectory API needs one of them.
    admin_api_keys: list[SecretStr] = Field(default_factory=list)
    # Brute force of the keys: failed key checks per client address (the address from
    # X-Forwarded-For only behind server.trusted_proxies), refused with 429 past a bound.
    auth_throttle: AuthThrottleSettings = AuthThrottleSettings()
    redis_url: str | None = Field(
        None, description="shared trajectory state in Redis (needs the vault key); required for server.workers > 1"
    )
    redis_prefix: str = Field("tandem:", description="prefix of every key in Redis")
    # When Redis fails: keep serving from memory (with a log line and a counter), or refuse.
    redis_failure: Literal["degrade", "refuse"] = "degrade"
    # Redis connections one gateway process keeps at most; a call that finds all in use waits
    # for one (load, not an outage). Redis' maxclients must exceed workers x replicas x this.
    redis_pool_size: int = Field(128, ge=1, le=10_000)
    # How long a call waits for a free pooled connection; past it that call alone fails
    # (503 store_busy, tandem_store_busy_total) and the breaker stays closed.
    redis_pool_wait_s: float = Field(10.0, gt=0)
    # A Redis reply slower than this (or a connection not made within it) counts as an outage.
    redis_timeout_s: float = Field(1.0, gt=0)
    trajectories: TrajectorySettings = TrajectorySettings()
    # Requests per minute and cloud dollars per day for each client key; 429 over them.
    client_limits: ClientLimitSettings = ClientLimitSettings()
    # Weights of the privacy score per value type (EMAIL, CARD, AI_KEY…: router/privacy/kinds.py); 1.0 when not listed.
    privacy_weights: dict[str, float] = Field(default_factory=dict)
    # Optional detector backends after Tandem's own (router/privacy/backends.py); off by default.
    privacy_backends: list[Literal["presidio"]] = Field(default_factory=list)
    audit: AuditSettings = AuditSettings()
    vault: VaultSettings = VaultSettings()
    ui: UISettings = UISettings()
    server: ServerSettings = ServerSettings()
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="the gateway's log level")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_source = YamlConfigSettingsSource(settings_cls)
        return (init_settings, env_settings, yaml_source)

    @model_validator(mode="after")
    def _check_references(self) -> Settings:
        for role in TARGETS:
            if role not in self.upstreams:
                raise ValueError(f"upstreams.{role} is required (the two roles are edge and cloud)")
        # The forced-target names always exist; a config may still redefine them.
        self.routes.setdefault("tandem/edge", EdgeRoute(strategy="edge"))
        self.routes.setdefault("tandem/cloud", CloudRoute(strategy="cloud"))
        for name, route in self.routes.items():
            for upstream in route.upstreams_used():
                if upstream not in self.upstreams:
                    raise ValueError(
                        f"routes.{name} uses the upstream {upstream!r}, which is not configured "
                        f"(upstreams: {', '.join(sorted(self.upstreams))})"
                    )
        for name, endpoint in self.upstreams.items():
            if endpoint.endpoints and name != "edge":
                raise ValueError(f"upstreams.{name}: endpoints (a pool of replicas) is for the edge upstream only")
            # aiohttp refuses a URL's user:password together with an Authorization header, so
            # every call would fail; and two sources of one credential is one too many.
            if url_has_credentials(endpoint.base_url) and (endpoint.api_key_env or endpoint.api_key_file):
                raise ValueError(
                    f"upstreams.{name}: base_url carries credentials (user:password@) and a key is set "
                    "too (api_key_env or api_key_file); keep the credential in one of them"
                )
        for pattern, alias in self.model_aliases.items():
            if alias.route not in self.routes:
                raise ValueError(
                    f"model_aliases.{pattern} names the route {alias.route!r}, which is not a route "
                    f"(routes: {', '.join(sorted(self.routes))})"
                )
        if self.unknown_model_route is not None and self.unknown_model_route not in self.routes:
            raise ValueError(
                f"unknown_model_route names {self.unknown_model_route!r}, which is not a route "
                f"(routes: {', '.join(sorted(self.routes))})"
            )
        return self

    def client_keys(self) -> frozenset[str]:
        """All accepted client keys; empty means no authentication."""
        keys = {k.get_secret_value() for k in self.client_api_keys}
        if self.client_api_keys_file is not None:
            try:
                lines = self.client_api_keys_file.read_text().splitlines()
            except OSError as exc:
                raise ConfigError(f"client_api_keys_file {self.client_api_keys_file}: {exc.strerror}") from exc
            keys.update(line.strip() for line in lines if line.strip())
        return frozenset(keys)


def url_has_credentials(url: str) -> bool:
    return "@" in urlsplit(url).netloc


def public_url(url: str) -> str:
    """`url` without what may be a credential: user:password@, the query and the fragment."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def admin_keys(settings: Settings) -> frozenset[str]:
    return frozenset(k.get_secret_value() for k in settings.admin_api_keys)


def load_settings(path: Path | None = None, **overrides: Any) -> Settings:
    """Read the YAML file (when given), the environment and `overrides`; raise ConfigError."""
    config: dict[str, Any] = dict(Settings.model_config)
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" ({path}:{mark.line + 1}:{mark.column + 1})" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"config file {path} is not valid YAML: {problem}{at}") from exc
        if data is not None and not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
        config["yaml_file"] = path
    loaded_cls = type("LoadedSettings", (Settings,), {"model_config": config})
    try:
        settings: Settings = loaded_cls(**overrides)
    except ValidationError as exc:
        raise ConfigError(describe(exc, path, Settings)) from exc
    except ValueError as exc:
        # pydantic-settings raises a bare ValueError for an environment value it cannot parse.
        raise ConfigError(f"invalid configuration: {exc}") from exc
    return settings
