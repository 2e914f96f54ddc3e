"""Whole numbers read from text a client or an upstream wrote (headers, cookies, notes)."""

from __future__ import annotations

# Past this, a count or a size means "too many" whatever its digits: a longer run of digits is
# not parsed (Python refuses ints of over 4,300 digits, and there is nothing to gain below that).
CAP = 10**18


def whole_number(text: str | None, cap: int = CAP) -> int | None:
    """The value of `text` when it is ASCII digits only (leading zeros allowed), at most `cap`;
    None for anything else (a sign, spaces, other scripts' digits such as `²` or `٣`)."""
    if not text or not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return cap if len(digits) > len(str(cap)) else min(int(digits), cap)
