"""What every configuration model shares: strictness, the error a configuration raises, and URL
checks."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict

from judge.arguments import url_problem


class ConfigError(Exception):
    """The configuration cannot be used; the message names the key and the problem."""


class Strict(BaseModel):
    # A misspelt key in a config file is a mistake to report, not to ignore silently.
    model_config = ConfigDict(extra="forbid")


def http_url(url: str, key: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{key} must start with http:// or https://, got {url!r}")
    # No host, a port out of range, a space: `check` would pass it and every step fail on it.
    problem = url_problem(url)
    if problem is not None:
        raise ValueError(f"{key} {problem}, got {url!r}")
    return url.rstrip("/")


def url_has_credentials(url: str) -> bool:
    return "@" in urlsplit(url).netloc


def public_url(url: str) -> str:
    """`url` without what may be a credential: user:password@, the query and the fragment."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
