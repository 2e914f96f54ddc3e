"""Optional detector backends, off by default: `privacy_backends: [presidio]` adds Presidio's
analyzer (names and postal addresses, from its NER model) after Tandem's own detectors.

Presidio is not a dependency of Tandem: install `presidio-analyzer` and its spaCy model where a
team has them. Asking for a backend that is not installed is a start-up error, not a silent
no-op. Its findings map onto Tandem's kinds (PERSON, ADDRESS, …); entities Tandem already
detects itself are not asked for.
"""

from __future__ import annotations

from typing import Any

from router.privacy import detect
from router.privacy.detector import Finding

# Presidio entity -> Tandem kind (kinds.py).
PRESIDIO_KINDS = {"PERSON": "PERSON", "LOCATION": "ADDRESS", "NRP": "PERSON"}


def presidio_backend(language: str = "en") -> detect.Backend:
    try:
        from presidio_analyzer import AnalyzerEngine  # type: ignore[import-not-found]
    except ImportError as error:
        raise RuntimeError(
            "privacy_backends lists presidio, but presidio-analyzer is not installed "
            "(pip install presidio-analyzer, plus its spaCy model)"
        ) from error
    engine: Any = AnalyzerEngine()

    def analyze(text: str) -> list[Finding]:
        results = engine.analyze(text=text, entities=list(PRESIDIO_KINDS), language=language)
        return [
            Finding(PRESIDIO_KINDS[r.entity_type], text[r.start : r.end], r.start, r.end, f"presidio:{r.entity_type}")
            for r in results
        ]

    return analyze


_FACTORIES = {"presidio": presidio_backend}
_enabled: set[str] = set()


def enable(names: list[str]) -> None:
    """Register the named backends once per process (several apps may share it in tests)."""
    for name in names:
        if name in _enabled:
            continue
        if name not in _FACTORIES:
            raise RuntimeError(f"unknown privacy backend {name!r} (known: {', '.join(sorted(_FACTORIES))})")
        detect.register(_FACTORIES[name]())
        _enabled.add(name)
