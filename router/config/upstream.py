"""One upstream (an OpenAI-compatible endpoint): where it is, its key, timeouts, prices, and how
the edge's replicas share its steps."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator, model_validator

from router.config.base import ConfigError, Strict, http_url, public_url
from router.config.prices import Prices, PromptCacheRules

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # an environment variable's name


class Timeouts(Strict):
    """Seconds. `first_byte` bounds the wait for the upstream's first byte of the answer
    (a non-streamed answer is all first byte); `idle` bounds each gap between stream chunks;
    `stream` bounds a whole streamed answer from its first byte (past it, the stream ends with
    an error event), so that an upstream dripping a byte now and then cannot hold it open."""

    connect: float = Field(5.0, gt=0, description="seconds to open a connection")
    first_byte: float = Field(
        120.0, gt=0, description="seconds until the first byte of the answer (a stream's keep-alive comments are not)"
    )
    idle: float = Field(60.0, gt=0, description="longest gap between stream chunks, seconds")
    stream: float = Field(
        600.0,
        gt=0,
        description="seconds a streamed answer may last from its first byte, however steadily it arrives; "
        "past it the stream ends with an error event (upstream_stream_timeout) and the step is recorded as an error",
    )


class PoolSettings(Strict):
    """How the edge's replicas (`endpoints`) share its steps (router/edge/pool.py)."""

    load_bound: float = Field(
        1.25,
        ge=1.0,
        description="affinity: a replica holding more than this × the mean of steps in flight (rounded up) is "
        "passed over for a new home, and a run's step spills from a home over it",
    )
    home_bound: float = Field(
        1.0,
        ge=1.0,
        description="affinity: a replica homing more than this × the mean of live runs homed per replica (this "
        "run counted, rounded up) is passed over for a new home; 1.0 spreads runs that start together evenly. "
        "Counted per gateway process; never moves a run that has a home",
    )
    home_idle_s: float = Field(
        600.0,
        gt=0,
        description="affinity: a run with no step for this long stops counting as homed on its replica (its "
        "home note stays)",
    )
    rehome_after_s: float = Field(
        5.0,
        ge=0,
        description="affinity: a run re-homes once its steps have spilled from its home (over load_bound) this long, "
        "seconds (or three steps in a row)",
    )
    breaker_failures: int = Field(
        3,
        ge=1,
        description="failures in a row (connect, timeout, dropped, 5xx, an answer that is no completion where another "
        "replica answered the step) that take a replica out of the pool",
    )
    breaker_s: float = Field(10.0, gt=0, description="seconds a replica stays out before it is tried again")
    scrape_interval_s: float = Field(
        1.0,
        ge=0,
        description="seconds between two reads of each replica's own load (vLLM's /metrics: requests running and "
        "waiting, KV-cache usage, prefix-cache hits), in the background; 0: not read (no route can then find "
        "the pool full)",
    )
    metrics_path: str = Field(
        "/metrics", pattern=r"^/", description="where each replica's metrics are, under its base URL less its final /v1"
    )


class UpstreamSettings(Strict):
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
    model: str = Field(min_length=1, description="model name sent upstream")
    api_key_env: str | None = Field(
        None, description="the name of the variable holding the key (read at start-up, never logged)"
    )
    api_key_file: Path | None = Field(None, description="file holding the key (read at start-up, never logged)")
    timeouts: Timeouts = Timeouts()
    prices: Prices = Field(Prices(), description="dollars per million tokens: input, cached_input, output")
    drop_params: list[str] = Field(default_factory=list, description="request keys removed before this upstream")
    # Added to every inner call (probe, judge, verifier, summary…) sent to this upstream, e.g.
    # `{chat_template_kwargs: {enable_thinking: false}}` so that a thinking model on vLLM answers
    # a one-token probe or an eight-token verdict without starting with <think>.
    inner_call_params: dict[str, Any] = Field(default_factory=dict)
    max_connections: int = Field(512, ge=1, description="keep-alive connection pool size towards this upstream")
    client: str = Field(
        "auto",
        pattern=r"^[a-z0-9_]+$",
        description="the HTTP client this upstream is called with: auto is the built-in HTTP/1.1 client for http:// "
        "and aiohttp for https://; builtin or aiohttp choose one for either scheme (both verify TLS and use proxies "
        "the same way). Checked at start-up",
    )
    ca_file: Path | None = Field(
        None,
        description="https only: a PEM file of the certificate authorities this upstream's certificate is checked "
        "against, in place of the system's trust store (an internal CA, a TLS-inspecting proxy's); null: the "
        "system's (SSL_CERT_FILE honoured). Read at start-up",
    )
    proxy: str = Field(
        "env",
        description="the forward proxy calls to this upstream go through: env takes https_proxy/HTTPS_PROXY (https) "
        "or http_proxy/HTTP_PROXY (http) from the environment, except for loopback hosts and what "
        "no_proxy/NO_PROXY names; direct never uses one; an http://[user:password@]host:port URL is that proxy, "
        "always. A CONNECT tunnel for https, absolute-form requests for http; credentials are never logged. "
        "Checked at start-up",
    )
    # The provider's prompt-cache rules, used to price the all-cloud counterfactual (cloud
    # upstream only; null: the provider caches nothing). Defaults: OpenAI's automatic caching.
    prompt_cache: PromptCacheRules | None = PromptCacheRules()

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        # A key pasted here in place of its variable's name was printed back by `check`, the
        # start-up warning and /readyz; the value is not echoed in the error either.
        if value is not None and not _VARIABLE.fullmatch(value):
            raise ValueError(
                "must be the name of an environment variable (letters, digits and _, e.g. OPENAI_API_KEY), "
                "not the key itself: put the key in that variable, or in a file named by api_key_file"
            )
        return value

    @model_validator(mode="before")
    @classmethod
    def _first_endpoint(cls, data: Any) -> Any:
        # The first replica stands for the pool where one URL is asked for (probes, inner calls).
        if isinstance(data, dict) and not data.get("base_url") and data.get("endpoints"):
            first = data["endpoints"][0]
            if isinstance(first, str):
                return {**data, "base_url": first}
        if isinstance(data, dict) and not data.get("base_url") and data.get("endpoints") == []:
            # Said so, rather than "base_url: Field required" of a key the operator left out on purpose.
            raise ValueError("endpoints is empty: list the base URL of each replica, or set base_url")
        return data

    @model_validator(mode="after")
    def _check_url(self) -> UpstreamSettings:
        self.endpoints = [http_url(url, "each of endpoints") for url in self.endpoints]
        # Compared without credentials, query and fragment: the pool names, homes and counts each
        # replica by that public URL, so two spellings of one server would share one name (a run
        # homed on the first resolved to the second) and the server would get two shares of steps.
        if len({_same_server(public_url(url)) for url in self.endpoints}) != len(self.endpoints):
            raise ValueError(
                "endpoints lists a base URL twice (credentials, query and fragment aside; the host's "
                "case and a default port too)"
            )
        self._one_metrics_url_each()
        self.base_url = http_url(self.base_url, "base_url")
        if self.endpoints and self.base_url not in self.endpoints:
            raise ValueError(f"base_url {self.base_url!r} is not one of endpoints; leave it out with endpoints")
        if not self.endpoints:
            self._no_pool_settings()
        if self.ca_file is not None and not any(url.startswith("https://") for url in [self.base_url, *self.endpoints]):
            raise ValueError("ca_file is set, but this upstream is not https://: there is no certificate to check")
        return self

    def _one_metrics_url_each(self) -> None:
        # Each replica's load is read from its own metrics (router/edge/scrape.py): two that
        # shared one URL would each be placed and found full by the other's queue.
        seen: dict[str, str] = {}
        for url in self.endpoints:
            metrics = _same_server(replica_metrics_url(public_url(url), self.pool.metrics_path))
            if metrics in seen:
                raise ValueError(
                    f"endpoints {public_url(seen[metrics])} and {public_url(url)} would have their load read from "
                    f"one metrics URL ({metrics}); a replica's is its base URL less its final /v1, then "
                    "pool.metrics_path: give each replica its own host:port, or its own path before /v1 (behind a "
                    "path-routing proxy, http://host/<replica>/v1)"
                )
            seen[metrics] = url

    def _no_pool_settings(self) -> None:
        # Set without endpoints they would do nothing, silently: refused, as ca_file is without
        # https. Their defaults pass (deploy/tandem.example.yaml spells every key out).
        unused = [] if self.balance == "affinity" else [f"balance ({self.balance})"]
        unused += [
            f"pool.{name}" for name in PoolSettings.model_fields if getattr(self.pool, name) != getattr(_POOL, name)
        ]
        if unused:
            said = unused[0] if len(unused) == 1 else f"{', '.join(unused[:-1])} and {unused[-1]}"
            raise ValueError(
                f"{said} {'is' if len(unused) == 1 else 'are'} set, but this upstream has no endpoints: balance and "
                "pool place steps on a pool of replicas; list the replicas' base URLs in endpoints, or leave "
                f"{'it' if len(unused) == 1 else 'them'} out"
            )

    def api_key(self) -> str | None:
        """The key, read at start-up from the named variable or file; never logged."""
        if self.api_key_file is not None:
            try:
                return self.api_key_file.read_text(encoding="utf-8").strip() or None
            except OSError as exc:
                raise ConfigError(f"api_key_file {self.api_key_file}: {exc.strerror}") from exc
            except UnicodeDecodeError as exc:
                raise ConfigError(f"api_key_file {self.api_key_file} is not UTF-8 text") from exc
        if self.api_key_env is not None:
            return os.environ.get(self.api_key_env) or None
        return None


_POOL = PoolSettings()


def replica_metrics_url(base_url: str, path: str) -> str:
    """Where an edge replica's own metrics are: its server's root, the base URL less the
    OpenAI API's final `/v1` (the host's root, or the path a path-routing proxy gives that
    replica: http://gpu-box:8000/gpu0/v1 -> http://gpu-box:8000/gpu0), then `path`."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, root + path, "", ""))


def _same_server(url: str) -> str:
    """A URL as a server is named: the host in lower case, a scheme's default port left out
    (`http://A:80/v1` and `http://a/v1` are one replica)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port
    if port is not None and port != {"http": 80, "https": 443}.get(parts.scheme):
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
