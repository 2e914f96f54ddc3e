"""Query parameters read strictly, alike on every endpoint that takes them: an unknown or
repeated parameter is a 400 that names it, and a number is ASCII digits as the docs write it.

Python's `int()` and `float()` take far more than a client means by a number (`1_000`, ` 5 `,
full-width and Arabic-Indic digits, `1e-400` quietly 0): a query that reads one of those as a
number answers something other than what was asked, where a 400 would have said why."""

from __future__ import annotations

import re
from collections.abc import Collection

from starlette.requests import Request

from router.errors import bad_request

# At most 9 digits: a bound far above any limit a query takes, and short enough to convert.
_WHOLE = re.compile(r"[0-9]{1,9}")
# A decimal number: digits with a point and a fraction, an exponent of at most two digits (no
# number a query takes needs more, and 1e-400 would be 0 without a word).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,2})?")


def single(request: Request, name: str) -> str | None:
    """The value of query parameter `name`, or None; given more than once, a 400."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise bad_request(f"query parameter '{name}' is given {len(values)} times; give it once", param=name)
    return values[0] if values else None


def known_only(request: Request, names: Collection[str]) -> None:
    """A 400 for the first query parameter (in name order) that is not one of `names`."""
    unknown = sorted(set(request.query_params.keys()) - set(names))
    if unknown:
        raise bad_request(
            f"unknown query parameter '{unknown[0][:80]}'; the parameters are {', '.join(names)}",
            param=unknown[0][:80],
        )


def whole_param(text: str, name: str, low: int, high: int) -> int:
    """`text` as a whole number from `low` to `high`, written in ASCII digits; else a 400."""
    if not _WHOLE.fullmatch(text) or not low <= int(text) <= high:
        raise bad_request(f"'{name}' must be a whole number from {low} to {high}, got {text[:80]!r}", param=name)
    return int(text)


def decimal_number(text: str) -> float | None:
    """`text` as a number if it is written as one in ASCII (`1700000000`, `1.7e9`); else None."""
    return float(text) if _DECIMAL.fullmatch(text) else None
