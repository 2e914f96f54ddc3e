"""What a demo task is: a prompt, the files of its workspace, the checks its tests make, and the
plan a competent agent follows. The agent sees only the prompt and the files (through tools);
the simulated models read the plan to script their answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# The kinds of step the simulated models tell apart; `recover` is any step whose previous tool
# result showed an error, whatever the plan says comes next.
Kind = Literal["read", "search", "edit", "write", "test", "final", "recover"]

Args = dict[str, str]


@dataclass(frozen=True)
class Action:
    """One tool call of a plan. `buggy` holds the arguments of a plausible wrong version (an edit
    that applies cleanly but breaks the tests); `expect_fail` marks a test run that is meant to
    fail (the task starts from failing tests)."""

    kind: Kind
    tool: str
    args: Args
    buggy: Args | None = None
    expect_fail: bool = False

    def fix(self) -> Args:
        """The call that repairs the buggy version once it is in the workspace."""
        if self.buggy is None:
            return self.args
        if self.tool == "edit_file":
            return {"path": self.args["path"], "old": self.buggy["new"], "new": self.args["new"]}
        return self.args


@dataclass(frozen=True)
class Check:
    """One test of the task's test suite: passes when `path` holds `contains` and not `absent`."""

    test: str
    path: str
    contains: str
    absent: str | None = None
    failure: str = "AssertionError"


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    prompt: str
    files: dict[str, str]
    plan: tuple[Action, ...]
    checks: tuple[Check, ...]
    # Steps beyond the plan the agent may spend on mistakes before it gives up.
    slack: int = 5

    @property
    def max_steps(self) -> int:
        return len(self.plan) + self.slack

    def message(self) -> str:
        """The first user message; the `Task <id>:` prefix lets a simulated model find the task."""
        return f"Task {self.id}: {self.prompt}"


TASK_LINE = re.compile(r"^Task ([\w.-]+):")


def task_id_of(message: str) -> str | None:
    match = TASK_LINE.match(message)
    return match.group(1) if match else None


# Small constructors keep the catalog readable.


def read(path: str) -> Action:
    return Action("read", "read_file", {"path": path})


def search(pattern: str) -> Action:
    return Action("search", "search", {"pattern": pattern})


def edit(path: str, old: str, new: str, buggy: str) -> Action:
    return Action("edit", "edit_file", {"path": path, "old": old, "new": new}, {"path": path, "old": old, "new": buggy})


def write(path: str, content: str, buggy: str) -> Action:
    return Action("write", "write_file", {"path": path, "content": content}, {"path": path, "content": buggy})


def run_tests(expect_fail: bool = False) -> Action:
    return Action("test", "run_tests", {}, expect_fail=expect_fail)


def submit(summary: str) -> Action:
    return Action("final", "submit", {"summary": summary})
