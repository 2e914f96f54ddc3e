"""Edits of a stitching entry made where the entry is kept, so that replicas never lose each
other's: the entry read, changed and written in one step.

A stitching entry is a line of space-separated tokens (stitch.py: a history's `b:` mark, its
`c:` answers, a rewrite's `r:` runs, an amendment's `u:` entries). A step used to read the
entries, change them in Python and set them back. With one process that is safe (stitch.py's
key locks order its steps); with several replicas (or `server.workers`) sharing Redis, two
steps of one task's runs that changed the same entry at once each set their own version, and
the one set first was lost: a run whose note of its answer was lost started a trajectory of its
own at its next step. So the change travels instead of the result: a `Merge` names its op, and
the store applies it to the entry as it is now (Redis in one Lua script, redis_scripts.MERGE,
which mirrors `merged` here; tests/test_merges.py holds the two to the same results).

The ops:
  drop    a: run id            the tokens of that run (`<run>|…`) removed (none: no write)
  append  a: token, b: most     the token added last, the oldest dropped past `most`
  front   a: token, b: most     the token added first unless there already, the last past `most`
  mark    a: run, b: state, c: most
                                a `b:` mark (stitch._Mark): `<run> <state> <others in flight>`,
                                the others being the entry's attempts in flight, less this run's
                                one when the state is an answer's, at most `most` - 1 of them,
                                then `+<n>`: how many more are in flight (never forgotten)
  note    a: run, b: tail, c: most
                                an `u:` or `v:` entry (amend.noted, continued.noted): `<run><tail>`
                                added last unless there already (an attempt answered again),
                                the oldest dropped past `most`. Runs noted with the same tail
                                (runs of one task given the same history) each keep their token,
                                oldest first: the request that amends or continues that text
                                takes the oldest still waiting and drops it, as a `c:` claim does
                                (stitch.py), so that runs alike are as many trajectories as runs.
                                (They were once made one `*<tail>` that named no run: it was
                                never cleared, and split every later run of that task.)
"""

from __future__ import annotations

from typing import NamedTuple

DROP, APPEND, FRONT, MARK, NOTE = "drop", "append", "front", "mark", "note"
FLIGHT = "flight"  # the state of a mark whose run has a request in flight
# What an `u:` or `v:` token written by an earlier version began with where it named no run
# (runs noted alike): such a token is read as no run's (amend.py, continued.py) until it ages out.
NO_RUN = "*"


class Merge(NamedTuple):
    """One edit of the stitching entry at `key` (ops above; unused arguments are "")."""

    key: str
    op: str
    a: str
    b: str = ""
    c: str = ""


def merged(raw: str | None, merge: Merge) -> str | None:
    """The entry after `merge`, from `raw` (None: no entry); None when it is left as it is."""
    tokens = (raw or "").split()
    op = merge.op
    if op == DROP:
        kept = [t for t in tokens if t.partition("|")[0] != merge.a]
        return " ".join(kept) if len(kept) < len(tokens) else None
    if op == APPEND:
        return " ".join([*tokens, merge.a][-int(merge.b) :])
    if op == FRONT:
        if merge.a in tokens:
            return None
        return " ".join([merge.a, *tokens][: int(merge.b)])
    if op == MARK:
        return _marked(tokens, merge.a, merge.b, int(merge.c))
    if op == NOTE:
        return _noted(tokens, merge.a, merge.b, int(merge.c))
    raise ValueError(f"unknown stitching merge {op!r}")


def others_in_flight(tokens: list[str]) -> tuple[list[str], int]:
    """A mark's tokens after its run and state: the other attempts it lists in flight, and how
    many more its `+<n>` tokens count."""
    listed: list[str] = []
    unlisted = 0
    for token in tokens:
        digits = token[1:]
        if token[:1] == "+" and digits.isascii() and digits.isdigit():
            unlisted += int(digits)
        else:
            listed.append(token)
    return listed, unlisted


def _marked(tokens: list[str], run: str, state: str, most: int) -> str:
    others, unknown = others_in_flight(tokens[2:])
    flying = (tokens[:1] if len(tokens) > 1 and tokens[1] == FLIGHT else []) + others
    if state != FLIGHT:
        if run in flying:
            flying.remove(run)  # this attempt's (another of the same run may still fly)
        elif unknown:
            unknown -= 1  # an attempt the list had no room for, answered
    # Attempts past the list are counted, never forgotten: a mark that lists one attempt in
    # flight must mean there is one (stitch._claim guesses the answer resent is that one's).
    keep = most - 1
    unknown += max(0, len(flying) - keep)
    return " ".join([run, state, *flying[:keep], *([f"+{unknown}"] if unknown else [])])


def _noted(tokens: list[str], run: str, tail: str, most: int) -> str | None:
    token = run + tail
    if token in tokens:
        return None  # noted already: an attempt answered again
    if len(tokens) >= most:
        tokens = tokens[len(tokens) - most + 1 :]
    return " ".join([*tokens, token])
