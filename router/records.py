"""`record`: the decorator of the value classes a step builds many of (a stitching mark, a
step's slot and identity, the policy's context and decision, the result's facts, usage).

To mypy it is `dataclasses.dataclass` itself, so `@record(frozen=True, slots=True)` is checked
exactly as a frozen dataclass is (an assignment to a field is an error; `mypy --strict` runs
over every module, which is where immutability is kept). At run time the class is a slotted
dataclass that is not frozen but hashed by its fields as a frozen one is (`unsafe_hash`): a
frozen dataclass's `__init__` sets each field through `object.__setattr__`, about three times
the cost of a plain assignment, and a step builds about sixteen of them (~70 fields).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:
    from dataclasses import dataclass

    def record(*, frozen: bool = False, slots: bool = False):
        """`dataclass(slots=…)`; `frozen`: hashed by its fields, as a frozen dataclass is."""
        return dataclass(slots=slots, unsafe_hash=frozen)


__all__ = ["record"]
