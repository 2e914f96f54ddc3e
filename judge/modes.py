"""What a judge model sees: the names of its input features, by mode."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from judge.draft import STATE_AND_DRAFT_NAMES
from judge.features import FEATURE_NAMES

SEES = ("state", "draft")


def names_for(sees: str) -> tuple[str, ...]:
    if sees == "state":
        return FEATURE_NAMES
    if sees == "draft":
        return STATE_AND_DRAFT_NAMES
    raise ValueError(f"sees must be one of {', '.join(SEES)}, got {sees!r}")


def ignored_columns(sees: str, ignore: tuple[str, ...]) -> list[int]:
    """The columns of `ignore`'s features in a `sees` vector; a name it does not hold is an error."""
    names = names_for(sees)
    unknown = [name for name in ignore if name not in names]
    if unknown:
        raise ValueError(f"no feature {', '.join(unknown)} in what a {sees} judge sees")
    return [names.index(name) for name in ignore]


def blinded(x: npt.NDArray[np.float32], columns: list[int]) -> npt.NDArray[np.float32]:
    """`x` with `columns` held at 0: a model fitted on it never splits on them (a tree) or weighs
    them (a linear model starts and stays at 0 where the column never varies), so the served
    vector keeps them and the model does not read them."""
    if not columns:
        return x
    out = x.copy()
    out[:, columns] = 0.0
    return out


IGNORE_HELP = "features the model is not given, comma-separated (e.g. draft_calls,draft_prose)"


def parse_ignore(text: str) -> tuple[str, ...]:
    """`--ignore a,b` -> ("a", "b")."""
    return tuple(name.strip() for name in text.split(",") if name.strip())
