"""Argument types of the commands' options: a value out of its range is refused by the parser
with a line naming the option and the range, before any work (a count of 0 that would loop for
ever, a negative rate, a share of 1.5, an empty output path)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit


def _number(text: str, kind: Callable[[str], float]) -> float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer of at least `low` (and at most `high`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"{value} is out of range: {bound}")
        return value

    return parse


def fraction(*, zero: bool = False, one: bool = False) -> Callable[[str], float]:
    """A share between 0 and 1 (each end allowed only when said)."""

    def parse(text: str) -> float:
        value = _number(text, float)
        if not ((value >= 0.0 if zero else value > 0.0) and (value <= 1.0 if one else value < 1.0)):
            low, high = "[0" if zero else "(0", "1]" if one else "1)"
            raise argparse.ArgumentTypeError(f"{value} is out of range: a share in {low}, {high}")
        return value

    return parse


def positive(text: str) -> float:
    """A number above 0."""
    value = _number(text, float)
    if not value > 0.0:  # NaN included
        raise argparse.ArgumentTypeError(f"{value} is out of range: above 0")
    return value


def _writable_place(path: Path) -> None:
    """The nearest folder that exists above `path` is a folder this user may write in."""
    above = path.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: {above} is a file, not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{path}: {above} is not writable")


def output(text: str) -> Path:
    """A file to write ("-": standard output): not empty, not a folder, in a place that can be
    written, checked before any work (a write that fails comes after minutes of it)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: name the file to write")
    path = Path(text)
    if text == "-":
        return path
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a folder: name the file to write")
    _writable_place(path)
    return path


def folder(text: str) -> Path:
    """A folder to write in (made when missing): not empty, not a file, checked before any work."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: name the folder to write in")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a file, not a folder")
    _writable_place(path / "x")
    return path


def url_problem(url: str, schemes: tuple[str, ...] = ("http", "https"), *, host_required: bool = True) -> str | None:
    """What makes `url` no address to connect to, or None: a scheme not among `schemes`, no host
    (where `host_required`: Redis' client takes none for localhost), a port that is no number
    from 1 to 65535, or white space. Said before any request, since the clients fail on these
    only when they connect (a traceback, or every retry spent first)."""
    shown = " or ".join(f"{scheme}://" for scheme in schemes)
    parts = urlsplit(url)
    if parts.scheme.lower() not in schemes or not url.lower().startswith(f"{parts.scheme.lower()}://"):
        return f"must start with {shown}"
    if any(character.isspace() for character in url):
        return "holds white space"
    if parts.scheme.lower() == "unix":
        return None if parts.path else "names no socket file"
    if host_required and not parts.hostname:
        return "names no host"
    try:
        port = parts.port
    except ValueError:
        return f"has no port from 1 to 65535 ({parts.netloc.rpartition(':')[2]!r})"
    if port == 0:
        return "has no port from 1 to 65535 (0)"
    return None


def http_url(text: str) -> str:
    """An http:// or https:// URL with a host (and a port in range, when given)."""
    problem = url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r} {problem} (e.g. http://127.0.0.1:8080)")
    return text


PORT = whole(0, 65535)
COUNT = whole(1)  # a number of things that must be at least one
RETRIES = whole(0)
SEED = whole(0, 2**32 - 1)  # numpy's and scikit-learn's seeds


def adapt_rate(text: str) -> float:
    """A route's `adapt_rate`: above 0, at most 0.5 (as the config accepts it)."""
    value = _number(text, float)
    if not 0.0 < value <= 0.5:
        raise argparse.ArgumentTypeError(f"{value} is out of range: above 0, at most 0.5")
    return value
