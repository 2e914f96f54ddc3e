"""Every strategy a route can name. A new strategy adds its settings class to the union."""

from __future__ import annotations

from router.policies.fixed import CloudRoute, EdgeRoute
from router.policies.random import RandomRoute

RouteSettings = EdgeRoute | CloudRoute | RandomRoute

STRATEGIES: tuple[str, ...] = ("edge", "cloud", "random")
