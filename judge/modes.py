"""What a judge model sees: the names of its input features, by mode."""

from __future__ import annotations

from judge.draft import STATE_AND_DRAFT_NAMES
from judge.features import FEATURE_NAMES

SEES = ("state", "draft")


def names_for(sees: str) -> tuple[str, ...]:
    if sees == "state":
        return FEATURE_NAMES
    if sees == "draft":
        return STATE_AND_DRAFT_NAMES
    raise ValueError(f"sees must be one of {', '.join(SEES)}, got {sees!r}")
