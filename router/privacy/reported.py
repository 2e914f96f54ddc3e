"""The kinds of sensitive value a gateway with given settings can report: Tandem's own
detectors', the optional backends', and the opt-in kinds its routes detect (the values of the
privacy metrics' `type` label, which the metrics declare from this list)."""

from __future__ import annotations

from router.privacy.detect import TYPES
from router.privacy.opt_in import KINDS as OPT_IN
from router.settings import Settings

# Kinds of value the optional detector backends add to Tandem's own (router/privacy/backends.py).
BACKEND_KINDS = {"presidio": ("PERSON", "ADDRESS")}


def reported_kinds(settings: Settings) -> tuple[str, ...]:
    """Kinds in the order they are first reported: Tandem's own, then the backends', then the
    opt-in kinds a route detects (`privacy_detect`)."""
    kinds = list(TYPES)
    for backend in settings.privacy_backends:
        kinds.extend(k for k in BACKEND_KINDS.get(backend, ()) if k not in kinds)
    for route in settings.routes.values():
        kinds.extend(k for k in (OPT_IN[w] for w in route.privacy_detect) if k not in kinds)
    return tuple(kinds)
