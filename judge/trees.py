"""A binary tree ensemble walked over flat lists: one step's probability in a few µs.

Built from a model's ONNX file by `judge.onnx_trees` and used by `judge.model` only where it gives
onnxruntime's probability (checked at load). Compiled with mypyc where the machine can build
(router/native_build.py); it runs the same in pure Python.
"""

from __future__ import annotations

import math
from typing import Final


class Trees:
    """Nodes of all the trees in flat lists: a split's feature (-1 for a leaf), threshold and
    next nodes (`<=` goes to `yes`), a leaf's weight; each tree's root; the base score."""

    __slots__ = ("base", "leaves", "no", "roots", "split", "thresholds", "width", "yes")

    def __init__(
        self,
        split: list[int],
        thresholds: list[float],
        yes: list[int],
        no: list[int],
        leaves: list[float],
        roots: list[int],
        base: float,
    ) -> None:
        self.split: Final = split
        self.thresholds: Final = thresholds
        self.yes: Final = yes
        self.no: Final = no
        self.leaves: Final = leaves
        self.roots: Final = roots
        self.base: Final = base
        self.width: Final = max(split) + 1 if split else 0  # features the splits read

    def probability(self, row: list[float]) -> float:
        """The logistic of the base score plus the leaves `row` reaches (`row`'s values are
        float32 values, as onnxruntime compares them; NaN takes the `no` branch, as there)."""
        split, thresholds, yes, no, leaves = self.split, self.thresholds, self.yes, self.no, self.leaves
        total = self.base
        for root in self.roots:
            node = root
            feature = split[node]
            while feature >= 0:
                node = yes[node] if row[feature] <= thresholds[node] else no[node]
                feature = split[node]
            total += leaves[node]
        if total >= 0:
            return 1.0 / (1.0 + math.exp(-total))
        small = math.exp(total)
        return small / (1.0 + small)
