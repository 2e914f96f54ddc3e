"""A route's privacy mode (`privacy:` in its settings) and what each mode means, in one place.

  allow       measure only: what reaches the cloud is counted
  redact      values become placeholders before the cloud sees them, restored in its answers
  keep_local  a step whose context holds sensitive values goes to the edge (and may pin)
  block       a sensitive step that would go to the cloud is refused (403 privacy_blocked)

Every mode but `allow` protects values: they are kept with placeholders at rest, a failed
detection counts as sensitive, and a trajectory whose state is unknown in a store outage is
treated as pinned (fail closed).
"""

from __future__ import annotations

from typing import Literal

# The config's type of a route's `privacy:`.
PrivacyMode = Literal["allow", "redact", "keep_local", "block"]


def protects(mode: str) -> bool:
    """Whether the mode protects sensitive values at all (every mode but `allow`)."""
    return mode != "allow"


def redacts(mode: str) -> bool:
    """Whether values are replaced by placeholders on the way to the cloud (and back in answers)."""
    return mode == "redact"


def blocks(mode: str) -> bool:
    """Whether a sensitive step bound for the cloud is refused rather than kept local."""
    return mode == "block"


def cloud_allowed(mode: str, sensitive: bool, failed: bool) -> bool:
    """Whether anything of a step may go to the cloud: not a sensitive step under keep_local or
    block, not a step whose detection failed under redact (nothing to redact it against)."""
    if mode in ("keep_local", "block"):
        return not sensitive
    if redacts(mode):
        return not failed
    return True


def can_keep_local(mode: str) -> bool:
    """Whether a step may be sent to the edge for privacy (`privacy_keep_local`): the cloud can
    be refused to it (see `cloud_allowed`), and the mode does not refuse the step instead."""
    return protects(mode) and not blocks(mode)
