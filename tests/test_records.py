"""`router.records.record`: at run time a frozen record is a plain slotted dataclass hashed by its
fields, as the frozen dataclass it is to mypy would be (equal records: one dict key, one set
member); the classes a step builds are such records."""

from __future__ import annotations

import dataclasses

from router.policies.base import Decision, Reason
from router.protocol.usage import Usage
from router.records import record


@record(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenPoint:
    x: int
    y: int = 0


def test_a_frozen_record_hashes_and_compares_as_a_frozen_dataclass() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash(FrozenPoint(1, 2)) == hash((1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(1)}) == 2
    assert {Point(1): "a"}[Point(1, 0)] == "a"
    assert dataclasses.replace(Point(1, 2), y=5) == Point(1, 5)
    assert not hasattr(Point(1), "__dict__")  # slotted


def test_the_step_classes_are_hashable_records() -> None:
    usage = Usage(10, 2, 3)
    assert hash(usage) == hash(Usage(10, 2, 3)) and usage.prompt_tokens == 10
    decision = Decision(target="edge", reason=Reason.JUDGE, score=0.5)
    assert decision == Decision(target="edge", reason=Reason.JUDGE, score=0.5)
    assert Usage.__dataclass_params__.unsafe_hash and not Usage.__dataclass_params__.frozen  # type: ignore[attr-defined]
