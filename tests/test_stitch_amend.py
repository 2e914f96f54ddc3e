"""Amended histories (router/trajectory/amend.py): the entries a run leaves at a history less its
last message, which request text extends one, and which run answered at a history goes on when
its answer was dropped; of runs noted alike (told apart by nothing) the oldest, never a guess
between runs noted apart. (Through a real gateway: tests/test_stitch_repeats.py.)"""

from __future__ import annotations

from router.trajectory.amend import MAX_ENTRIES, Amended, amendable, amended_runs, noted
from router.trajectory.merges import DROP, Merge, merged

TASK = "New task:\nwrite proof.txt"


def _noted(raw: str | None, run: str, text: str) -> str | None:
    """The `u:` entry after `amend.noted`'s edit is applied to `raw` (as the stores apply it)."""
    value = merged(raw, noted("head", run, text))
    return raw if value is None else value


ERROR = "\nError:\nError executing tool 'write_file'\nNow let's retry"


def test_only_a_user_messages_text_after_another_message_is_amendable() -> None:
    assert amendable([{"role": "user", "content": TASK}], None) is None  # nothing before it
    assert amendable([{"role": "system", "content": "s"}, {"role": "tool", "content": "x"}], "h") is None
    parts = [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": TASK}]}]
    found = amendable(parts, "h")
    assert found is not None and (found.head, found.text) == ("h", TASK)


def test_a_text_extended_after_a_line_break_finds_its_run_once() -> None:
    raw = _noted(_noted(None, "t1", "other task"), "t2", TASK)
    found = amended_runs(raw, TASK + ERROR, set())
    assert found == Amended(("t2",), ERROR, "")
    assert raw is not None
    left = merged(raw, Merge("u:head", DROP, "t2"))  # the stitcher's edit when it takes the run
    assert left == raw.split()[0]
    assert amended_runs(left, TASK + ERROR, set()) is None  # amended once
    assert amended_runs(raw, TASK + ERROR, {"t2"}) is None  # that run excluded (its step in flight)
    assert amended_runs(raw, TASK, set()) is None  # the same text: no amendment
    assert amended_runs(raw, TASK + " and more", set()) is None  # no line break where it ended
    assert amended_runs(raw, "Old task:\nwrite proof.txt" + ERROR, set()) is None  # another text


def test_runs_amendable_alike_are_taken_oldest_first() -> None:
    raw = _noted(_noted(None, "t1", TASK), "t2", TASK)  # runs of one task at one history
    found = amended_runs(raw, TASK + ERROR, set())
    assert found is not None and found.runs == ("t1", "t2")
    assert amended_runs(raw, TASK + ERROR, {"t1"}) == Amended(("t2",), ERROR, "")  # t1's step in flight


def test_long_texts_and_damaged_entries() -> None:
    long = "x" * 5000 + "\nend"
    raw = _noted(None, "t1", long)
    assert amended_runs(raw, long + ERROR, set()) == Amended(("t1",), ERROR, "")
    # Another text of the same length and ends is told apart only by what the key fixes (the
    # history before it); the same ends and length here are taken for the same text.
    assert amended_runs("t9|x|y t8 |", long + ERROR, set()) is None
    many = None
    for index in range(MAX_ENTRIES + 5):
        many = _noted(many, f"t{index}", f"task {index}")
    assert many is not None and len(many.split()) == MAX_ENTRIES
    # A run noted twice (an attempt answered again) is one run, and is taken whole.
    twice = _noted(_noted(None, "t1", TASK), "t1", TASK)
    assert amended_runs(twice, TASK + ERROR, set()) == Amended(("t1",), ERROR, "")


def test_the_earliest_run_answered_at_a_history_and_not_continued_goes_on() -> None:
    from router.trajectory.amend import answered_before

    raw = "t1|k1 t2|k2 t1|k3"
    assert answered_before(raw, set()) is None  # two runs given that history: no telling which
    assert answered_before(raw, {"t1"}) == "t2"
    assert answered_before("t1|k1 t1|k3", set()) == "t1"
    assert merged(raw, Merge("c:head", DROP, "t2")) == "t1|k1 t1|k3"  # the stitcher's edit
    assert answered_before(None, set()) is None
    assert answered_before("t1|k1", {"t1"}) is None


def test_runs_answered_after_the_same_text_each_keep_their_entry() -> None:
    """Runs of one task answered alike (a fleet, a benchmark) each keep an entry, oldest first
    (they were once one entry that named none, never cleared: every later run of the task that
    amended split); the entry stays bounded."""
    raw = None
    for index in range(40):
        raw = _noted(raw, f"t{index}", TASK)
    assert raw is not None and len(raw.split()) == 40
    found = amended_runs(raw, TASK + ERROR, set())
    assert found is not None and found.runs[:2] == ("t0", "t1") and found.appended == ERROR
    assert merged(raw, noted("head", "t9", TASK)) is None  # noted already: nothing new to write
    other = _noted(raw, "t7", "another task")
    assert amended_runs(other, "another task" + ERROR, set()) == Amended(("t7",), ERROR, "")
    taken = merged(raw, Merge("u:head", DROP, "t0"))  # taken: the other runs' entries stay
    assert taken is not None and len(taken.split()) == 39
    again = amended_runs(taken, TASK + ERROR, set())
    assert again is not None and again.runs[0] == "t1"
