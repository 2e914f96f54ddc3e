"""The agent's tools and the in-memory workspace they act on, with a simulated test runner.

Nothing touches the disk: files are a dict, and the "tests" are the task's checks on the files'
text. A tool result that starts with `error:` or `tests failed` tells the agent (and the
simulated model reading the conversation) that the step went wrong.
"""

from __future__ import annotations

from typing import Any

import orjson

from sim.tasks import Task

ERROR_PREFIXES = ("error:", "tests failed")


def _tool(name: str, description: str, params: dict[str, str]) -> dict[str, Any]:
    properties = {key: {"type": "string", "description": text} for key, text in params.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(params)},
        },
    }


TOOLS: list[dict[str, Any]] = [
    _tool("read_file", "Read a file of the workspace and return its text.", {"path": "path of the file"}),
    _tool(
        "search",
        "Search every file of the workspace for a literal pattern; returns path:line: text lines.",
        {"pattern": "the text to look for"},
    ),
    _tool(
        "edit_file",
        "Replace the one occurrence of `old` in a file with `new`.",
        {"path": "path of the file", "old": "exact text to replace", "new": "replacement text"},
    ),
    _tool(
        "write_file",
        "Create or overwrite a file with the given content.",
        {"path": "path of the file", "content": "the whole new content"},
    ),
    _tool("run_tests", "Run the workspace's test suite and report failures.", {}),
    _tool(
        "submit",
        "Finish the task. Call it once, when the tests pass.",
        {"summary": "one or two sentences on what changed"},
    ),
]
TOOL_NAMES = frozenset(tool["function"]["name"] for tool in TOOLS)


def is_error(result: str) -> bool:
    return result.startswith(ERROR_PREFIXES)


class Workspace:
    """The files of one task run, and what the agent's tool calls did to them."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.files = dict(task.files)
        self.submitted = False
        self.solved = False

    def call(self, name: str, arguments: str) -> str:
        """Execute one tool call; the result is what goes back to the model as the tool message."""
        if name not in TOOL_NAMES:
            return f"error: unknown tool {name!r}; the tools are {', '.join(sorted(TOOL_NAMES))}"
        try:
            args = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            return f"error: the arguments of {name} are not valid JSON ({exc})"
        if not isinstance(args, dict):
            return f"error: the arguments of {name} must be a JSON object"
        handler = getattr(self, f"_{name}")
        result: str = handler(args)
        return result

    def tests_pass(self) -> bool:
        return not self._failures()

    def _failures(self) -> list[str]:
        failures = []
        for check in self.task.checks:
            text = self.files.get(check.path, "")
            if check.contains not in text or (check.absent is not None and check.absent in text):
                failures.append(f"FAILED {check.test} - {check.failure}")
        return failures

    @staticmethod
    def _missing(args: dict[str, Any], *keys: str) -> str | None:
        absent = [key for key in keys if not isinstance(args.get(key), str)]
        return f"error: missing or non-string argument(s): {', '.join(absent)}" if absent else None

    def _read_file(self, args: dict[str, Any]) -> str:
        if problem := self._missing(args, "path"):
            return problem
        path = args["path"]
        if path not in self.files:
            return f"error: {path}: no such file"
        return self.files[path]

    def _search(self, args: dict[str, Any]) -> str:
        if problem := self._missing(args, "pattern"):
            return problem
        if "path" in args and not any(p.startswith(str(args["path"])) for p in self.files):
            return f"error: {args['path']}: no such directory"
        hits = [
            f"{path}:{number}: {line.strip()}"
            for path, text in sorted(self.files.items())
            for number, line in enumerate(text.splitlines(), 1)
            if args["pattern"] in line
        ]
        return "\n".join(hits) if hits else "no matches"

    def _edit_file(self, args: dict[str, Any]) -> str:
        if problem := self._missing(args, "path", "old", "new"):
            return problem
        path, old, new = args["path"], args["old"], args["new"]
        if path not in self.files:
            return f"error: {path}: no such file"
        count = self.files[path].count(old)
        if count != 1:
            where = "not found" if count == 0 else f"found {count} times"
            return f"error: the old text was {where} in {path}; read the file and try again"
        self.files[path] = self.files[path].replace(old, new)
        return f"edited {path}: replaced {len(old.splitlines()) or 1} line(s)"

    def _write_file(self, args: dict[str, Any]) -> str:
        if problem := self._missing(args, "path", "content"):
            return problem
        self.files[args["path"]] = args["content"]
        return f"wrote {args['path']} ({len(args['content'].splitlines())} lines)"

    def _run_tests(self, args: dict[str, Any]) -> str:
        if "path" in args and not any(p.startswith(str(args["path"])) for p in self.files):
            return f"error: {args['path']}: no tests found there"
        failures = self._failures()
        total = len(self.task.checks) + 3  # a few unrelated tests that always pass
        if failures:
            summary = f"{len(failures)} failed, {total - len(failures)} passed in 0.41s"
            return "tests failed: " + summary + "\n" + "\n".join(failures)
        return f"tests passed: {total} passed in 0.38s"

    def _submit(self, args: dict[str, Any]) -> str:
        self.submitted = True
        self.solved = self.tests_pass()
        return "submitted"
