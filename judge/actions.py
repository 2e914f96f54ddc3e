"""Action types: what an assistant message does, whatever the agent framework's tool names.

EdgeWise found that the cloud matters most on write/edit steps and on error recovery, so the
judge needs to know what kind of work the recent steps did. Frameworks spell the same action
differently (OpenHands `str_replace_editor`, Claude Code `Edit`, Codex `apply_patch`, a bash
`sed -i` in mini-swe-agent, keystrokes in Terminus-2's JSON), so the mapping is a table of tool
names plus a classifier for shell commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any

import orjson


class ActionType(StrEnum):
    READ = "read"
    SEARCH = "search"
    WRITE = "write"
    EDIT = "edit"
    EXECUTE = "execute"
    TEST = "test"
    PLAN = "plan"
    SUBMIT = "submit"
    OTHER = "other"


ACTION_TYPES: tuple[ActionType, ...] = tuple(ActionType)

# When one message does several things, the most consequential one names it: a step that edits
# and then runs the tests is an edit step (that is where a weak model's slip does harm).
_PRIORITY: dict[ActionType, int] = {
    kind: rank
    for rank, kind in enumerate(
        (
            ActionType.EDIT,
            ActionType.WRITE,
            ActionType.SUBMIT,
            ActionType.TEST,
            ActionType.EXECUTE,
            ActionType.SEARCH,
            ActionType.READ,
            ActionType.PLAN,
            ActionType.OTHER,
        )
    )
}


def most_consequential(kinds: list[ActionType]) -> ActionType:
    return min(kinds, key=_PRIORITY.__getitem__) if kinds else ActionType.OTHER


# ---- shell commands -----------------------------------------------------------------------

_SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
# Splits a command line into simple commands; a heredoc body rides along with its command.
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")
_HEREDOC = re.compile(r"<<-?\s*['\"]?\w+")
# `> file` or `>> file`, but not `2>&1`, `> /dev/null` or `>&2`.
_REDIRECT = re.compile(r"(?<![\d&>])>>?\s*(?!&|/dev/null)[\w./~$\"'-]")
_WRAPPERS = frozenset({"sudo", "time", "timeout", "env", "nohup", "exec", "command", "stdbuf", "xargs"})
_TEST_WORDS = frozenset({"pytest", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest"})
_TEST_SUBCOMMANDS = {
    "npm": "test",
    "yarn": "test",
    "pnpm": "test",
    "bun": "test",
    "go": "test",
    "cargo": "test",
    "make": "test",
    "mvn": "test",
    "gradle": "test",
    "dotnet": "test",
}
_READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "view", "wc", "diff", "file", "stat", "xxd"})
_SEARCHERS = frozenset({"grep", "egrep", "rg", "ag", "ack", "find", "fd", "ls", "tree", "locate", "which", "glob"})
_WRITERS = frozenset({"echo", "printf", "cat", "tee", "touch", "mkdir", "cp", "mv"})
_EDITORS = frozenset({"patch", "ed", "ex"})
# SWE-agent's own commands (its 0.7 interface, run in its shell): named by what they do.
_SWE_AGENT_COMMANDS = {
    **dict.fromkeys(("open", "goto", "scroll_up", "scroll_down"), "read"),
    **dict.fromkeys(("find_file", "search_dir", "search_file"), "search"),
    "edit": "edit",
    "create": "write",
    "submit": "submit",
}
_IGNORED = frozenset({"cd", "pushd", "popd", "set", "source", ".", "export", "true", "clear", ""})


def _words(segment: str) -> list[str]:
    words = segment.strip().split()
    # Skip `VAR=value` prefixes and wrappers such as `timeout 60`, to reach the real program.
    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in _WRAPPERS):
        words = words[1:]
        while words and (words[0].isdigit() or words[0].startswith("-")):
            words = words[1:]
    return words


def _classify_segment(segment: str) -> ActionType | None:
    words = _words(segment)
    if not words or words[0] in _IGNORED:
        return None
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program in _SWE_AGENT_COMMANDS:
        return ActionType(_SWE_AGENT_COMMANDS[program])
    if program in _TEST_WORDS or program.startswith(("runtests", "run_tests", "test_")):
        return ActionType.TEST
    if program.startswith("python") and rest and rest[0] == "-m" and len(rest) > 1:
        return ActionType.TEST if rest[1] in ("pytest", "unittest", "tox", "nose2") else ActionType.EXECUTE
    if _TEST_SUBCOMMANDS.get(program) in rest[:2]:
        return ActionType.TEST
    if program == "sed":
        return ActionType.EDIT if any(w.startswith("-i") or w == "--in-place" for w in rest) else ActionType.READ
    if program == "perl" and any(w.startswith("-pi") or w.startswith("-i") for w in rest):
        return ActionType.EDIT
    if program in _EDITORS or (program == "git" and rest[:1] == ["apply"]) or program == "apply_patch":
        return ActionType.EDIT
    if program in _WRITERS and (_REDIRECT.search(segment) or _HEREDOC.search(segment) or program in ("tee", "touch")):
        return ActionType.WRITE
    if program == "git":
        verb = rest[0] if rest else ""
        if verb == "grep":
            return ActionType.SEARCH
        return ActionType.READ if verb in ("diff", "show", "log", "status", "blame") else ActionType.EXECUTE
    if program in _SEARCHERS:
        return ActionType.SEARCH
    if program in _READERS:
        return ActionType.READ
    return ActionType.EXECUTE


def classify_command(command: str) -> ActionType:
    """The action type of a shell command line (several commands: the most consequential)."""
    if any(marker in command for marker in _SUBMIT_MARKERS):
        return ActionType.SUBMIT
    # A heredoc's body is data, not commands: classify only the line that opens it.
    head = command.split("<<", 1)
    line = head[0] + ("<<" + head[1].split("\n", 1)[0] if len(head) > 1 else "")
    kinds = [kind for segment in _SEGMENTS.split(line) if (kind := _classify_segment(segment))]
    return most_consequential(kinds) if kinds else ActionType.OTHER


# ---- tool calls ---------------------------------------------------------------------------

Args = dict[str, Any]


def _command_of(args: Args) -> str:
    command = args.get("command", args.get("cmd", args.get("keystrokes", "")))
    if isinstance(command, list):
        # Codex's `shell` passes argv, usually ["bash", "-lc", "<script>"]: the script matters.
        parts = [str(part) for part in command]
        return parts[-1] if len(parts) >= 3 and parts[1] in ("-c", "-lc") else " ".join(parts)
    return str(command)


def _shell(args: Args) -> ActionType:
    return classify_command(_command_of(args))


_EDITOR_COMMANDS = {
    "view": ActionType.READ,
    "create": ActionType.WRITE,
    "write": ActionType.WRITE,  # Goose's text_editor
    "str_replace": ActionType.EDIT,
    "insert": ActionType.EDIT,
    "undo_edit": ActionType.EDIT,
}


def _editor(args: Args) -> ActionType:
    return _EDITOR_COMMANDS.get(str(args.get("command", "")), ActionType.OTHER)


def _patch(args: Args) -> ActionType:
    patch = str(args.get("input", args.get("patch", args.get("command", ""))))
    # A patch that only adds files writes them; any update or delete is an edit.
    if "*** Add File:" in patch and "*** Update File:" not in patch and "*** Delete File:" not in patch:
        return ActionType.WRITE
    return ActionType.EDIT


def _fixed(kind: ActionType) -> Callable[[Args], ActionType]:
    return lambda _args: kind


_READ = _fixed(ActionType.READ)
_SEARCH = _fixed(ActionType.SEARCH)
_WRITE = _fixed(ActionType.WRITE)
_EDIT = _fixed(ActionType.EDIT)
_TEST = _fixed(ActionType.TEST)
_PLAN = _fixed(ActionType.PLAN)
_SUBMIT = _fixed(ActionType.SUBMIT)

# Tool names, lower-cased, of the frameworks the gateway sits behind.
TOOL_TABLE: dict[str, Callable[[Args], ActionType]] = {
    # shells: OpenHands, SWE-agent, Claude Code, Codex, generic
    **dict.fromkeys(("execute_bash", "bash", "shell", "exec_command", "local_shell", "run_command"), _shell),
    **dict.fromkeys(("terminal", "execute_command", "run_shell_command", "container.exec"), _shell),
    # file editors: OpenHands / SWE-agent (`file_editor`: the OpenHands agent SDK's)
    **dict.fromkeys(
        ("str_replace_editor", "str_replace_based_edit_tool", "edit_tool", "text_editor", "file_editor"), _editor
    ),
    # Claude Code
    **dict.fromkeys(("read", "notebookread", "webfetch", "view", "open", "goto", "scroll_up", "scroll_down"), _READ),
    **dict.fromkeys(("grep", "glob", "ls", "websearch", "search_file", "search_dir", "find_file"), _SEARCH),
    **dict.fromkeys(("write", "create", "create_file"), _WRITE),
    **dict.fromkeys(("edit", "multiedit", "notebookedit", "edit_file", "replace", "insert"), _EDIT),
    **dict.fromkeys(("todowrite", "todoread", "think", "update_plan", "exit_plan_mode", "task", "advisor"), _PLAN),
    # OpenHands' browsing and task list, Claude Code's background shell output
    **dict.fromkeys(("web_read", "browser", "bashoutput"), _READ),
    "task_tracker": _PLAN,
    **dict.fromkeys(("finish", "submit", "task_complete", "attempt_completion"), _SUBMIT),
    # Codex
    "apply_patch": _patch,
    # the demo's own tools (and common names for the same things)
    **dict.fromkeys(("read_file", "cat", "view_file", "open_file"), _READ),
    **dict.fromkeys(("search", "grep_search", "list_dir", "list_files", "file_search"), _SEARCH),
    **dict.fromkeys(("write_file",), _WRITE),
    **dict.fromkeys(("run_tests", "run_test", "pytest"), _TEST),
}


def parse_arguments(raw: object) -> Args | None:
    """A tool call's arguments as a dict, or None when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, (str, bytes)):
        return None
    try:
        args = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return None
    return args if isinstance(args, dict) else None


# A tool the table does not know (an MCP server's, a business API's: `get_user_details`,
# `book_reservation`, `createIssue`) is typed by the verb its name starts with: reading one record,
# searching many, adding one, changing or removing one. What a step does to the world is what
# decides how it can fail, whatever the domain: a lookup rarely fails, a change is checked
# against the state it changes.
_VERBS: dict[str, ActionType] = {
    **dict.fromkeys(
        ("get", "read", "fetch", "show", "view", "describe", "open", "load", "lookup", "check", "retrieve", "inspect"),
        ActionType.READ,
    ),
    **dict.fromkeys(("list", "search", "find", "query", "browse", "filter"), ActionType.SEARCH),
    **dict.fromkeys(
        (
            "create",
            "add",
            "book",
            "insert",
            "post",
            "send",
            "write",
            "new",
            "make",
            "register",
            "save",
            "store",
            "upload",
        ),
        ActionType.WRITE,
    ),
    **dict.fromkeys(
        (
            "update",
            "modify",
            "edit",
            "set",
            "change",
            "cancel",
            "delete",
            "remove",
            "patch",
            "exchange",
            "return",
            "replace",
            "move",
            "rename",
        ),
        ActionType.EDIT,
    ),
    **dict.fromkeys(("run", "exec", "execute", "calculate", "compute", "call", "invoke"), ActionType.EXECUTE),
    **dict.fromkeys(("plan", "think", "reflect", "note"), ActionType.PLAN),
    **dict.fromkeys(("finish", "done", "complete", "transfer", "handoff", "escalate"), ActionType.SUBMIT),
}
_NAME_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])")


def _unprefixed(name: str) -> str:
    """A tool's name without the prefix of the MCP server or agent extension that serves it
    (Claude Code's `mcp__filesystem__read_file`, Goose's `developer__shell`, `server.tool`)."""
    return name.rsplit("__", 1)[-1].rsplit(".", 1)[-1]


def _by_verb(name: str) -> ActionType:
    """An unknown tool's type by the first word of its unprefixed name (`get_user`,
    `createIssue`), OTHER when it is no verb known here."""
    first = _NAME_WORD.search(name, 0, 64)  # a name may be huge
    return _VERBS.get(first.group().lower(), ActionType.OTHER) if first else ActionType.OTHER


def classify_tool_call(name: str, arguments: object) -> ActionType:
    key = name.strip()
    bare = _unprefixed(key)
    # A known tool under a server's or extension's prefix is the same tool.
    handler = TOOL_TABLE.get(key.lower()) or TOOL_TABLE.get(bare.lower())
    if handler is None:
        return _by_verb(bare)
    args = parse_arguments(arguments)
    return handler(args if args is not None else {})


# ---- text content (no tool calls) -----------------------------------------------------------

_FENCED = re.compile(r"```(?:bash|sh|shell|console)?\s*\n(.*?)```", re.DOTALL)


def _terminus_commands(content: str) -> list[ActionType] | None:
    """Terminus-2 answers a JSON object whose `commands` hold keystrokes; None if it is not one."""
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end <= start or ('"commands"' not in content and '"task_complete"' not in content):
        return None
    try:
        reply = orjson.loads(content[start : end + 1])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(reply, dict):
        return None
    kinds = [
        classify_command(str(command.get("keystrokes", "")))
        for command in reply.get("commands") or []
        if isinstance(command, dict)
    ]
    if reply.get("task_complete") is True:
        kinds.append(ActionType.SUBMIT)
    return kinds


def classify_content(content: str) -> list[ActionType]:
    """Actions written in a message's text: Terminus-2 JSON or mini-swe-agent's fenced bash."""
    if not content:
        return []
    terminus = _terminus_commands(content)
    if terminus is not None:
        return terminus
    return [classify_command(block) for block in _FENCED.findall(content)]


def content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def classify_message(message: dict[str, Any]) -> list[ActionType]:
    """The action type of each tool call of an assistant message, or of the commands in its text."""
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        kinds = []
        for call in tool_calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                kinds.append(ActionType.OTHER)
                continue
            kinds.append(classify_tool_call(str(function.get("name") or ""), function.get("arguments")))
        return kinds
    return classify_content(content_text(message))


def message_action(message: dict[str, Any]) -> ActionType:
    """One action type for the whole message: the most consequential of what it does."""
    return most_consequential(classify_message(message))
