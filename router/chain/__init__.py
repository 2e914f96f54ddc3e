"""The step as a chain of stages (router/chain/run.py runs it; router/step.py is the state
they share). `STAGES` is the chain, in order:

identify → scan → decide → shape context → redact → forward with failover → restore → record

Each stage is one module here with one class: built once per process from the shared `Parts`
(router/chain/stage.py), with a request hook, a per-target hook and an answer hook, any of
which it may leave out. A new stage is a module here and its name in `STAGES`.
"""

from __future__ import annotations

from .context import Context
from .decide import Decide
from .forward import Forward
from .identify import Identify
from .record import Record
from .redact import Redact
from .restore import Restore
from .run import Chain, StageTimes
from .scan import Scan
from .stage import Parts, Stage

STAGES: tuple[type[Stage], ...] = (Identify, Scan, Decide, Context, Redact, Forward, Restore, Record)


def build_chain(parts: Parts, times: StageTimes | None = None) -> Chain:
    """The chain of `STAGES` as this module holds it when the engine is built, each stage
    built from `parts`."""
    return Chain([stage(parts) for stage in STAGES], times)


__all__ = ["STAGES", "Chain", "Parts", "Stage", "StageTimes", "build_chain"]
