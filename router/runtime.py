"""Process-wide settings a gateway process makes once its gateway has started: made by `tandem
serve` (router/cli.py) and by the tests and benchmarks that run uvicorn themselves, never by
`create_app`, which may be built inside a process it does not own (a test, an embedding)."""

from __future__ import annotations

import gc

# Fewer young-generation collections: a step allocates many short-lived objects, and the
# default threshold (700) made collections a visible share of the time at load.
GC_THRESHOLD = (20_000, 20, 100)


def tune_gc() -> None:
    """Freeze the start-up heap and raise the young generation's threshold. The start-up heap
    never becomes garbage: frozen, the collector does not walk it again and again (full
    collections of it cost tens of milliseconds under load)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
