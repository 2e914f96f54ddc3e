"""router/metrics/fast.py's updates leave exactly the values prometheus-client's own `inc` and
`observe` leave (bucket bounds, infinities, NaN, many random amounts), raise as they do for a
negative count, and fall back to the library's methods for a child they do not know."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from router.metrics.fast import adder

BUCKETS = (0.001, 0.01, 0.1, 0.5, 1.0, 5.0)


def _families(registry: CollectorRegistry) -> tuple[Counter, Histogram]:
    counter = Counter("c", "a counter", ("route",), registry=registry)
    histogram = Histogram("h", "a histogram", ("route",), buckets=BUCKETS, registry=registry)
    return counter, histogram


def _text(registry: CollectorRegistry) -> list[str]:
    return [line for line in generate_latest(registry).decode().splitlines() if "_created" not in line]


def test_the_same_values_as_the_library() -> None:
    library, fast = CollectorRegistry(), CollectorRegistry()
    (lc, lh), (fc, fh) = _families(library), _families(fast)
    inc, observe = adder(fc.labels("r")), adder(fh.labels("r"))
    rng = random.Random(7)
    amounts = [*BUCKETS, 0.0, -1.0, 6.0, math.inf, -math.inf, math.nan, 1.0000001]
    amounts += [rng.choice([rng.random() * 10, rng.expovariate(20), float(rng.randint(0, 5))]) for _ in range(2000)]
    for amount in amounts:
        lh.labels("r").observe(amount)
        observe(amount)
        if amount >= 0:
            lc.labels("r").inc(amount)
            inc(amount)
    assert _text(fast) == _text(library)


def test_an_amount_on_a_bound_falls_in_that_bound_s_bucket() -> None:
    registry = CollectorRegistry()
    _, histogram = _families(registry)
    observe = adder(histogram.labels("r"))
    for amount in (0.001, 0.0005, 0.0010001, 5.0, math.nan):
        observe(amount)
    text = _text(registry)
    assert 'h_bucket{le="0.001",route="r"} 2.0' in text and 'h_bucket{le="0.01",route="r"} 3.0' in text
    assert 'h_bucket{le="5.0",route="r"} 4.0' in text and 'h_count{route="r"} 4.0' in text  # NaN: no bucket


def test_a_negative_count_is_refused_as_the_library_refuses_it() -> None:
    counter, _ = _families(CollectorRegistry())
    with pytest.raises(ValueError, match="non-negative"):
        adder(counter.labels("r"))(-1.0)
    with pytest.raises(ValueError, match="non-negative"):
        counter.labels("r").inc(-1.0)


def test_other_children_get_the_library_methods() -> None:
    gauge = Gauge("g", "a gauge", ("route",), registry=CollectorRegistry()).labels("r")
    add = adder(gauge)
    add(2.5)
    add(1.0)
    assert gauge._value.get() == 3.5
