"""A step's counter and histogram updates without prometheus-client's per-call checks.

`Counter.inc` checks that the metric is a child (`_raise_if_not_observable`, two calls),
that the amount is not negative and whether an exemplar came, then adds under the value's
lock; `Histogram.observe` walks its bounds in Python. A step books about eight of them. The
children a step updates are always observable and never get exemplars, so `adder` hands back
one function per child that does only the rest: the same values in the same objects (the
exposition and the multiprocess files read them as before), the same error for a negative
count, and the histogram's bucket found by bisection (the first bound at or above the amount,
as the library's walk finds; none for NaN, as there). A prometheus-client whose internals moved
gets the library's own methods: slower, never wrong.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter, Histogram


def adder(child: Any) -> Callable[[float], None]:
    """`child.inc` (a counter's child) or `child.observe` (a histogram's), made cheap."""
    try:
        if type(child) is Counter:
            return _counter(child)
        if type(child) is Histogram:
            return _histogram(child)
    except (AttributeError, TypeError):  # internals moved: the library's methods below
        pass
    method: Callable[[float], None] = child.observe if isinstance(child, Histogram) else child.inc
    return method


def _counter(child: Counter) -> Callable[[float], None]:
    add: Callable[[float], None] = child._value.inc

    def inc(amount: float) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        add(amount)

    return inc


def _histogram(child: Histogram) -> Callable[[float], None]:
    bounds = [float(bound) for bound in child._upper_bounds]
    buckets = [bucket.inc for bucket in child._buckets]
    add_sum: Callable[[float], None] = child._sum.inc
    if len(bounds) != len(buckets) or not bounds or bounds[-1] != float("inf") or bounds != sorted(bounds):
        raise TypeError("unexpected histogram internals")
    top = bounds[-1]

    def observe(amount: float) -> None:
        add_sum(amount)
        if amount <= top:  # false for NaN alone, which falls in no bucket
            buckets[bisect_left(bounds, amount)](1)

    return observe
