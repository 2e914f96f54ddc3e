"""The one way the commands read a config: `validated` is what `tandem serve` starts with and what
`tandem check` checks, so the two never disagree; `summary` says what it resolved to (never a
key); `open_proxy_refusal` is the network safety rule both apply."""

from __future__ import annotations

import difflib
import ipaddress
import os
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel

from router.config.base import public_url, url_has_credentials
from router.config.upstream import UpstreamSettings
from router.config_errors import named_key, where
from router.settings import ConfigError, Settings, load_settings


def _warn_if_empty(path: Path | None) -> None:
    """An empty file is almost always a mistake (a wrong path, a failed template): say so."""
    if path is None or not path.is_file():
        return
    try:
        empty = yaml.safe_load(path.read_text()) is None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return  # load_settings names the problem
    if empty:
        print(f"tandem: warning: config file {path} is empty; using the embedded defaults", file=sys.stderr)


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves only this machine. A name counts as loopback only when every
    address it resolves to is a loopback address; an unresolvable name (or none: every
    interface) does not."""
    if not host.strip("[]"):
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in found)


def keyed_upstreams(settings: Settings) -> list[str]:
    """Upstreams whose credential resolves (a key from env or file, or user:password in the URL)."""
    return [
        name
        for name, upstream in settings.upstreams.items()
        if upstream.api_key() or url_has_credentials(upstream.base_url)
    ]


def open_proxy_refusal(settings: Settings) -> str | None:
    """Why `serve` must not start, or None: bound beyond this machine with no client keys while an
    upstream's key is set, anyone who reaches the port spends that key."""
    server = settings.server
    if server.insecure_open_proxy or is_loopback(server.host) or settings.client_keys():
        return None
    keyed = keyed_upstreams(settings)
    if not keyed:
        return None
    return (
        f"refusing to serve on {server.host}: no client keys are configured and the upstream key of "
        f"{', '.join(keyed)} is set, so anyone who reaches this port would spend it. Set client keys "
        "(client_api_keys_file, or TANDEM_CLIENT_API_KEYS='[\"...\"]'), bind 127.0.0.1, or pass "
        "--insecure-open-proxy (server.insecure_open_proxy: true) if a proxy in front authenticates"
    )


def _check_privacy_weights(settings: Settings, path: Path | None) -> None:
    """Each of `privacy_weights` names a kind of sensitive value: a misspelt one (EMIAL) would
    weigh nothing and leave the kind meant at 1.0, silently. Checked here rather than in the
    settings, which sit below the privacy package that defines the kinds."""
    from router.privacy.kinds import KINDS

    for kind in settings.privacy_weights:
        if kind not in KINDS:
            close = difflib.get_close_matches(kind.upper(), KINDS, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(
                f"privacy_weights.{kind}: not a kind of sensitive value ({hint}the kinds: {', '.join(KINDS)})"
                f"{where(path, ('privacy_weights', kind))}"
            )


def _check_journal_dir(settings: Settings, path: Path | None) -> None:
    """The outage journal's folder is usable: one that is not (a file, a folder this process
    cannot write) would leave the journal in memory only, the durability asked for gone."""
    folder = settings.trajectories.outage_journal_dir
    if folder is None or not settings.redis_url:
        return  # without Redis the folder is not used
    from router.trajectory.journal_file import directory_problem

    problem = directory_problem(folder)
    if problem is not None:
        raise ConfigError(
            f"trajectories.outage_journal_dir: {problem}: the outage journal cannot be kept there "
            f"(name a writable folder, or remove the key to keep it in memory only)"
            f"{where(path, ('trajectories', 'outage_journal_dir'))}"
        )


# Variables of Tandem's own that are not settings (read by the CLI, the build, the tests' tools).
_NOT_SETTINGS = frozenset(
    {
        "TANDEM_PURE",
        "TANDEM_VAULT_KEY",
        "TANDEM_ADMIN_KEY",
        "TANDEM_KEY",
        "TANDEM_CACHE_DIR",
        "TANDEM_CONFIG",
        "TANDEM_JUDGE_RUNTIME",
        "TANDEM_STAGE_TIMES",
        "TANDEM_TINY_MODEL_DIR",
        "TANDEM_VLLM_VENV",
    }
)


def _setting_variables() -> list[str]:
    """The variables that set a setting: each top-level key's, and each key of a section's."""
    names = []
    for name, field in Settings.model_fields.items():
        names.append(f"TANDEM_{name.upper()}")
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names += [f"TANDEM_{name.upper()}__{key.upper()}" for key in section.model_fields]
    return names


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each `TANDEM_` variable that sets nothing: the settings read the
    environment by name, so a misspelt one (`TANDEM_CLIENT_API_KEY`, `TANDEM_PORT`) was
    silently ignored, the gateway serving without the keys or on the port it named."""
    known = _setting_variables()
    tops = {name.split("__")[0] for name in known}
    said = []
    for variable in sorted(environ):
        upper = variable.upper()
        if not upper.startswith("TANDEM_") or upper in _NOT_SETTINGS or upper.split("__")[0] in tops:
            continue
        leaf = "__" + upper.removeprefix("TANDEM_")
        close = [name for name in known if name.endswith(leaf)] or difflib.get_close_matches(upper, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        said.append(f"environment variable {variable} sets no setting and is ignored{hint}")
    return said


def validated(path: Path | None, **overrides: object) -> Settings:
    """The settings `tandem serve` would start with, checked as far as can be without serving:
    every key, the keys' files, the vault key, every route built (a judge's model loaded), and
    the open-proxy rule. Raises ConfigError naming what is wrong."""
    _warn_if_empty(path)
    for warning in unknown_variables(os.environ):
        print(f"tandem: warning: {warning}", file=sys.stderr)
    settings = load_settings(path, **overrides)
    _check_privacy_weights(settings, path)
    if settings.server.workers > 1 and not settings.redis_url:
        raise ConfigError(
            f"server.workers is {settings.server.workers}, but several workers need shared "
            f"trajectory state: set redis_url (or run one worker){where(path, ('server', 'workers'))}"
        )
    try:
        settings.client_keys()
    except ConfigError as error:
        raise ConfigError(f"{error}{where(path, ('client_api_keys_file',))}") from error
    from router.transport.choose import egress_for

    for name, upstream in settings.upstreams.items():
        try:
            upstream.api_key()
        except ConfigError as error:
            loc = ("upstreams", name, "api_key_file")
            raise ConfigError(f"upstreams.{name}.{error}{where(path, loc)}") from error
        try:
            egress_for(upstream, name)  # its client, CA file and proxy (the environment's too)
        except ConfigError as error:
            raise ConfigError(f"{error}{where(path, named_key(str(error)))}") from error
    _check_journal_dir(settings, path)
    refusal = open_proxy_refusal(settings)
    if refusal is not None:
        raise ConfigError(refusal)
    from router.engine import build_routes, build_vault

    try:
        build_vault(settings)
        build_routes(settings)  # a judge's model loads, or the command stops naming it
    except ConfigError as error:
        raise ConfigError(f"{error}{where(path, named_key(str(error)))}") from error
    return settings


def key_problem(upstream: UpstreamSettings) -> tuple[str, str] | None:
    """Why an upstream with a key configured (a variable, a file) has none, as the setting and
    what is wrong: ("api_key_env", "OPENAI_API_KEY is not set"), or "… is set but empty", or
    ("api_key_file", "… is empty"). None when it has its key or none is asked for."""
    if upstream.api_key():
        return None
    if upstream.api_key_file is not None:
        return "api_key_file", f"{upstream.api_key_file} is empty"
    if upstream.api_key_env is not None:
        state = "is set but empty" if upstream.api_key_env in os.environ else "is not set"
        return "api_key_env", f"{upstream.api_key_env} {state}"
    return None


def _why_no_key(upstream: UpstreamSettings) -> str:
    problem = key_problem(upstream)
    return "no key" if problem is None else f"no key: {problem[1]}, its calls will be refused"


def missing_keys(settings: Settings) -> list[tuple[str, str]]:
    """The upstreams whose configured key (a variable, a file) is missing, and why ("api_key_env
    OPENAI_API_KEY is not set"): a typo or a variable not exported, which `check` warns of (the
    gateway starts, and its calls there fail 401)."""
    found = []
    for name, upstream in settings.upstreams.items():
        problem = key_problem(upstream)
        if problem is not None:
            found.append((name, " ".join(problem)))
    return found


def audit_problem(settings: Settings) -> str | None:
    """Why the audit log could not be written where it is configured, or None: a path that is a
    folder, a file where its folder should be, or a folder the gateway may not write in (the
    sink makes missing folders). The gateway still starts (its lines are then dropped and
    counted), so `check` warns of it before the first step finds it."""
    if settings.audit.mode == "off":
        return None
    path = settings.audit.path
    if path.is_dir():
        return f"audit.path {path} is a folder, not a file"
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"audit.path {path}: {existing} is a file, not a folder"
    target = path if path.exists() else existing
    if not os.access(target, os.W_OK):
        return f"audit.path {path}: {target} is not writable"
    return None


def summary(settings: Settings) -> list[str]:
    """What a config resolves to, a line each: upstreams (whether a key is set, never the key),
    routes, aliases, client and admin keys (how many, never which)."""
    lines = []
    for name, upstream in settings.upstreams.items():
        key = "key set" if upstream.api_key() else _why_no_key(upstream)
        where = public_url(upstream.base_url)
        if upstream.endpoints:
            replicas = ", ".join(public_url(url) for url in upstream.endpoints)
            where = f"a pool of {len(upstream.endpoints)} replicas ({replicas}), balance {upstream.balance},"
        lines.append(f"upstream {name}: {where} model {upstream.model} ({key})")
        lines.append(f"upstream {name} is called {egress_line(upstream, name)}")
    for name, route in settings.routes.items():
        failover = "on" if route.failover else "off"
        lines.append(f"route {name}: strategy {route.strategy}, privacy {route.privacy}, failover {failover}")
    for pattern, alias in settings.model_aliases.items():
        listed = ", ".join(alias.models) or "none listed"
        lines.append(f"alias {pattern} -> {alias.route} (/v1/models: {listed})")
    if settings.unknown_model_route:
        lines.append(f"unknown model names -> {settings.unknown_model_route}")
    clients = len(settings.client_keys())
    lines.append(f"client keys: {clients} configured" if clients else "client keys: none (no authentication)")
    lines.append(f"admin keys: {len(settings.admin_api_keys)} configured")
    lines.append(f"store: {'redis' if settings.redis_url else 'memory'}")
    server = settings.server
    reach = "this machine only" if is_loopback(server.host) else "the network"
    if server.insecure_open_proxy and not clients:
        reach += ", open proxy allowed (server.insecure_open_proxy)"
    lines.append(f"server: {server.host}:{server.port} ({reach}), {server.workers} worker(s)")
    return lines


def egress_line(upstream: UpstreamSettings, name: str) -> str:
    """How calls leave for an upstream, in words: its client, its proxy (by address, never its
    credentials) and the CAs an https one is checked against."""
    from router.transport.choose import egress_for

    egress = egress_for(upstream, name)
    through = f"through the proxy {egress.proxy.shown}" if egress.proxy is not None else "directly"
    said = f"with {egress.client}, {through}"
    if egress.tls is not None:
        said += f", TLS checked against {egress.ca_file if egress.ca_file else 'the system trust store'}"
    return said


def start_line(settings: Settings, path: Path | None) -> str:
    """`tandem serve`'s one start-up line: config, address, routes, client keys on or off and
    each upstream's key set or not (never a key's value)."""
    upstreams = ", ".join(
        f"{name} {'key set' if upstream.api_key() else 'no key'}" for name, upstream in settings.upstreams.items()
    )
    clients = len(settings.client_keys())
    server = settings.server
    host = f"[{server.host}]" if ":" in server.host else server.host
    return (
        f"tandem: serving {path if path is not None else 'the embedded defaults'} on "
        f"http://{host}:{server.port}/v1 ({server.workers} worker(s)); routes {', '.join(settings.routes)}; "
        f"client keys {'on (' + str(clients) + ')' if clients else 'off'}; upstreams: {upstreams}; "
        f"store {'redis' if settings.redis_url else 'memory'}; access log {'on' if server.access_log else 'off'}"
    )
