"""Loading the configuration: a YAML file plus `TANDEM_…` environment variables (nested with `__`),
merged over the embedded defaults into one `Settings`, with the checks that span its parts.

Precedence, highest first: values passed in code, environment variables, the YAML file,
the embedded defaults. The embedded defaults describe a single machine: the edge at vLLM's
default local port, the cloud at OpenAI with the key from `OPENAI_API_KEY`. The types of the
parts are router/config/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from judge.arguments import url_problem
from router.config.base import ConfigError as ConfigError  # what load_settings raises
from router.config.base import url_has_credentials
from router.config.limits import AuthThrottleSettings, ClientLimitSettings, LimitSettings
from router.config.prices import Prices
from router.config.serving import KeptResponseSettings, ModelAlias, ServerSettings, UISettings
from router.config.stores import AuditSettings, TrajectorySettings, VaultSettings
from router.config.strategies import CloudRoute, EdgeRoute, RandomRoute, RouteSettings
from router.config.upstream import UpstreamSettings
from router.config.yaml_text import load_yaml
from router.config_errors import describe

TARGETS = ("edge", "cloud")


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


class _BuiltInUpstreams(PydanticBaseSettingsSource):
    """The built-in upstreams as settings read from a source (see Settings' sources)."""

    def __init__(self, settings_cls: type[BaseSettings], wanted: bool) -> None:
        super().__init__(settings_cls)
        self._wanted = wanted

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        if not self._wanted:
            return {}
        upstreams = _default_upstreams()
        return {"upstreams": {name: u.model_dump(mode="json", exclude_unset=True) for name, u in upstreams.items()}}


def _default_routes() -> dict[str, RouteSettings]:
    # EdgeWise: about 40% of steps on the cloud matched cloud-only accuracy.
    return {"tandem": RandomRoute(strategy="random", p=0.4)}


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
    privacy_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(default_factory=dict)
    # Optional detector backends after Tandem's own (router/privacy/backends.py); off by default.
    privacy_backends: list[Literal["presidio"]] = Field(default_factory=list)
    audit: AuditSettings = AuditSettings()
    vault: VaultSettings = VaultSettings()
    ui: UISettings = UISettings()
    kept_responses: KeptResponseSettings = KeptResponseSettings()
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
        # With no upstreams in the file or the arguments, the built-in ones are a source of their
        # own, under the environment: `TANDEM_UPSTREAMS__EDGE__BASE_URL` then changes the built-in
        # edge's URL (as the docs say) instead of replacing the built-in upstreams whole.
        given = "upstreams" in yaml_source() or "upstreams" in getattr(init_settings, "init_kwargs", {})
        return (init_settings, env_settings, yaml_source, _BuiltInUpstreams(settings_cls, not given))

    @field_validator("redis_url")
    @classmethod
    def _redis_url_scheme(cls, url: str | None) -> str | None:
        # `tandem check` would pass these and `tandem serve` fail with a traceback from the
        # Redis client; an empty variable (TANDEM_REDIS_URL=) is most often a missing secret.
        if url is None:
            return None
        if not url.strip():
            raise ValueError("empty: leave it out for the in-memory store, or set a redis:// URL")
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("it must start with redis://, rediss:// or unix://")
        problem = url_problem(url, ("redis", "rediss", "unix"), host_required=False)
        if problem is not None:  # a port out of range: a traceback from the client at start
            raise ValueError(f"it {problem}")
        return url

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
                lines = self.client_api_keys_file.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise ConfigError(f"client_api_keys_file {self.client_api_keys_file}: {exc.strerror}") from exc
            except UnicodeDecodeError as exc:
                raise ConfigError(f"client_api_keys_file {self.client_api_keys_file} is not UTF-8 text") from exc
            keys.update(line.strip() for line in lines if line.strip())
        return frozenset(keys)


def admin_keys(settings: Settings) -> frozenset[str]:
    return frozenset(k.get_secret_value() for k in settings.admin_api_keys)


_ENV_FIELD = re.compile(r'error parsing value for field "(\w+)" from source "EnvSettingsSource"')


def load_settings(path: Path | None = None, **overrides: Any) -> Settings:
    """Read the YAML file (when given), the environment and `overrides`; raise ConfigError."""
    config: dict[str, Any] = dict(Settings.model_config)
    if path is not None:
        if path.is_dir():
            raise ConfigError(f"config file {path} is a folder: name the YAML file in it")
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        if not path.is_file():
            raise ConfigError(f"config file {path} is not a regular file (a device or a pipe): name the YAML file")
        try:
            data = load_yaml(path.read_text(encoding="utf-8"))
        except RecursionError as exc:
            raise ConfigError(f"config file {path} nests its values too deeply to be a configuration") from exc
        except OSError as exc:
            raise ConfigError(f"config file {path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start}): is it the YAML file?") from exc
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
        # pydantic-settings raises a bare ValueError for an environment value it cannot parse:
        # a list or mapping field's, which it reads as JSON (the value may be a secret: not shown).
        field = _ENV_FIELD.search(str(exc))
        if field is None:
            raise ConfigError(f"invalid configuration: {exc}") from exc
        name = field.group(1)
        variable = f"{Settings.model_config.get('env_prefix', '')}{name.upper()}"
        raise ConfigError(
            f"{variable}: the environment value of {name} must be JSON, a list "
            '(\'["one", "two"]\') or a mapping (\'{"name": ...}\'); unset it to leave it out'
        ) from exc
    return settings
