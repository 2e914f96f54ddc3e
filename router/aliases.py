"""Model aliases: client model names (Claude Code asks for `claude-…`, Codex for `gpt-5…`)
matched by fnmatch patterns to routes, and the concrete names `/v1/models` lists for them."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import TypeVar

from router.config.serving import ModelAlias

R = TypeVar("R")


def aliased_route(routes: Mapping[str, R], aliases: Mapping[str, ModelAlias], model: str) -> R | None:
    """The route of the first alias whose pattern matches (case-sensitive, in config order)."""
    for pattern, alias in aliases.items():
        if fnmatchcase(model, pattern):
            return routes[alias.route]
    return None


def listed_models(routes: Mapping[str, object], aliases: Mapping[str, ModelAlias]) -> list[str]:
    """Route names, then each alias's concrete names, once each."""
    names = dict.fromkeys(routes)
    for alias in aliases.values():
        names.update(dict.fromkeys(alias.models))
    return list(names)
