"""What a judge model sees: the names of its input features, by mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from judge import arguments
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
    if set(ignore) >= set(names):
        raise ValueError(f"--ignore names every feature a {sees} judge sees: the model would read nothing")
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


# The gradient-boosted trees' shape (`--trees`, `--depth`, `--rate`), shared by train, lofo and
# retrain. Off-family, fewer and slower-learning trees generalise better than many fast ones: a
# deep fit learns one harness's habits (docs/judge.md, "Leave one family out").
TREES, DEPTH, RATE, SUBSAMPLE = 150, 3, 0.1, 0.8
MAX_TREES, MAX_DEPTH = 10_000, 20


def add_tree_options(parser: Any) -> None:
    # Bounded: scikit-learn allocates for every tree at once (--trees 99999999999 was a numpy
    # memory error's traceback), and a tree's nodes double with each level of depth.
    parser.add_argument("--trees", type=arguments.whole(1, MAX_TREES), default=TREES, help="gbdt: number of trees")
    parser.add_argument("--depth", type=arguments.whole(1, MAX_DEPTH), default=DEPTH, help="gbdt: depth of each tree")
    parser.add_argument("--rate", type=arguments.positive, default=RATE, help="gbdt: learning rate")


def tree_params(trees: int, depth: int, rate: float) -> dict[str, Any]:
    """scikit-learn's parameters for a tree shape; a shape that cannot be fitted is an error."""
    if trees < 1 or depth < 1 or not 0.0 < rate <= 1.0:
        raise ValueError(f"trees and depth must be at least 1 and the rate in (0, 1], got {trees}, {depth}, {rate}")
    return {"n_estimators": trees, "max_depth": depth, "learning_rate": rate, "subsample": SUBSAMPLE}


def tree_flags(params: dict[str, Any]) -> str:
    """The options that rebuild `params` (none where they are the defaults), for a card's `made_by`."""
    flags = [
        f"--{flag} {params[key]}"
        for flag, key, default in (
            ("trees", "n_estimators", TREES),
            ("depth", "max_depth", DEPTH),
            ("rate", "learning_rate", RATE),
        )
        if params.get(key, default) != default
    ]
    return "".join(f" {flag}" for flag in flags)
