"""Builds a route's policy from its settings. Each strategy module of this package names the
settings classes it builds (`BUILDS`); they are gathered the first time a route is built, so a new
strategy is its settings in router/config/strategies.py and its module here, nothing else."""

from __future__ import annotations

import functools
import importlib
import pkgutil

import router.policies
from router.config.routes import RouteBase
from router.config.strategies import RouteSettings
from router.policies.base import Builder, Policy


@functools.cache
def builders() -> dict[type[RouteBase], Builder]:
    """Every strategy module's `BUILDS`, merged (a settings class named twice is an error)."""
    found: dict[type[RouteBase], Builder] = {}
    for module_info in pkgutil.iter_modules(router.policies.__path__):
        module = importlib.import_module(f"{router.policies.__name__}.{module_info.name}")
        for settings, builder in getattr(module, "BUILDS", {}).items():
            if settings in found:
                raise TypeError(f"{settings.__name__} is built by two modules of router/policies")
            found[settings] = builder
    return found


def build_policy(route: RouteSettings) -> Policy:
    """The route's policy (a judge's model loaded and checked: ValueError or JudgeModelError)."""
    for settings in type(route).__mro__:
        builder = builders().get(settings)
        if builder is not None:
            return builder(route)
    raise TypeError(f"no module of router/policies builds {type(route).__name__} (strategy {route.strategy!r})")
