"""The draft's editor slips (feature version 5): a `command`-driven editor's call without what its
command needs, and its `create` of a path the recent turns show. Both are read from the draft's
tool calls alone; a shell command that does the same is no editor call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge.draft import DRAFT_FEATURE_NAMES, draft_features
from judge.features import TAIL_MESSAGES

EDITOR = [{"type": "function", "function": {"name": "str_replace_editor", "parameters": {"type": "object"}}}]
TASK = {"role": "user", "content": "Fix the rounding bug in calc.py."}
INCOMPLETE = DRAFT_FEATURE_NAMES.index("draft_edit_incomplete")
SHOWN = DRAFT_FEATURE_NAMES.index("draft_creates_shown")


def _call(arguments: Any, name: str = "str_replace_editor") -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": raw}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _values(draft: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[float, float]:
    vector = draft_features(draft, messages, EDITOR)
    return float(vector[INCOMPLETE]), float(vector[SHOWN])


def _result(text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "c0", "content": text}


@pytest.mark.parametrize(
    ("arguments", "incomplete"),
    [
        ({"command": "str_replace", "path": "/repo/calc.py", "new_str": "x = 1"}, 1.0),
        ({"command": "str_replace", "path": "/repo/calc.py", "old_str": "x = 0", "new_str": "x = 1"}, 0.0),
        ({"command": "create", "path": "/repo/new.py"}, 1.0),
        ({"command": "create", "path": "/repo/new.py", "file_text": "print(1)\n"}, 0.0),
        ({"command": "insert", "path": "/repo/calc.py", "new_str": "y = 2"}, 1.0),
        ({"command": "insert", "path": "/repo/calc.py", "insert_line": 3, "new_str": "y = 2"}, 0.0),
        ({"command": "view", "path": "/repo/calc.py"}, 0.0),  # needs nothing more
        ({"command": "ls -la"}, 0.0),  # a shell tool's `command`: no editor command
        ({"command": ["bash", "-lc", "create"]}, 0.0),  # Codex's shell: a list
        ({"command": {"create": 1}}, 0.0),
        ('{"command": "str_replace", "path": ', 0.0),  # not JSON: draft_invalid's concern
    ],
)
def test_an_editor_call_without_what_its_command_needs(arguments: Any, incomplete: float) -> None:
    assert _values(_call(arguments), [TASK])[0] == incomplete


def test_creating_a_path_the_recent_turns_show() -> None:
    create = _call({"command": "create", "path": "/repo/reproduce.py", "file_text": "import calc\n"})
    earlier = _call({"command": "create", "path": "/repo/reproduce.py", "file_text": "print(0)\n"})
    assert _values(create, [TASK]) == (0.0, 0.0)
    assert _values(create, [TASK, earlier, _result("File created successfully at: /repo/reproduce.py")])[1] == 1.0
    # The path in an earlier call's arguments alone (the result said nothing of it): not shown
    assert _values(create, [TASK, earlier, _result("ok")])[1] == 0.0
    # ... or in an output that lists it
    listing = _call({"command": "view", "path": "/repo"})
    assert _values(create, [TASK, listing, _result("/repo/calc.py\n/repo/reproduce.py\n")])[1] == 1.0
    # Another file shown is not this one
    assert _values(create, [TASK, listing, _result("/repo/calc.py\n")])[1] == 0.0


def test_only_the_recent_window_is_read() -> None:
    create = _call({"command": "create", "path": "/repo/reproduce.py", "file_text": "x\n"})
    old = [TASK, _call({"command": "view", "path": "/repo"}), _result("/repo/reproduce.py")]
    filler = [_call({"command": "view", "path": "/repo/calc.py"}), _result("1\tx = 0")] * TAIL_MESSAGES
    assert _values(create, old + filler)[1] == 0.0
    assert _values(create, old + filler[: TAIL_MESSAGES - 4])[1] == 1.0


def test_a_shell_that_writes_a_shown_file_is_no_editor_call() -> None:
    # A shell's redirection overwrites by design: nothing an editor would refuse.
    messages = [TASK, _call({"command": "cat calc.py"}, "bash"), _result("x = 0  # calc.py")]
    heredoc = _call({"command": "cat > calc.py <<'EOF'\nx = 1\nEOF"}, "bash")
    fenced = {"role": "assistant", "content": "```bash\ncat > calc.py <<'EOF'\nx = 1\nEOF\n```"}
    assert _values(heredoc, messages) == (0.0, 0.0)
    assert _values(fenced, messages) == (0.0, 0.0)


MINI_SYSTEM = {
    "role": "system",
    "content": "You are a helpful assistant that can interact with a computer shell.\n"
    "Your response must contain exactly ONE bash code block with ONE command (or commands connected "
    "with && or ||).\nLike this:\n\nTHOUGHT: why\n\n```bash\nthe_command\n```\n"
    "Failure to follow these rules will cause your response to be rejected.",
}


def _system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


FORMAT = DRAFT_FEATURE_NAMES.index("draft_breaks_format")


def _reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


@pytest.mark.parametrize(
    ("reply", "breaks"),
    [
        ("THOUGHT: look.\n\n```bash\nls -la\n```", 0.0),
        ("THOUGHT: two at once.\n\n```bash\nls\n```\n\n```bash\ncat a.py\n```", 1.0),
        ("THOUGHT: I am done, the fix is in place.", 1.0),  # no block at all
        ("THOUGHT: the fix:\n```python\nx = 1\n```\nthen\n```bash\npython a.py\n```", 0.0),  # one bash block
        ("THOUGHT: only python\n```python\nx = 1\n```", 1.0),  # the prompt's example is a bash fence
    ],
)
def test_a_reply_out_of_the_format_the_prompt_demands(reply: str, breaks: float) -> None:
    messages = [MINI_SYSTEM, TASK]
    assert float(draft_features(_reply(reply), messages)[FORMAT]) == breaks


def test_no_format_demanded_no_format_broken() -> None:
    two = _reply("```bash\nls\n```\n```bash\npwd\n```")
    assert float(draft_features(two, [TASK])[FORMAT]) == 0.0  # no system prompt
    swe_agent = {
        "role": "system",
        "content": "Your output should always include _one_ discussion and _one_ command field EXACTLY as in the following example",
    }
    assert float(draft_features(two, [swe_agent, TASK])[FORMAT]) == 0.0  # SWE-agent 0.x takes several
    any_fence = _system("Please always provide EXACTLY ONE action in triple backticks:\n```\nls\n```")
    assert float(draft_features(two, [any_fence, TASK])[FORMAT]) == 1.0
    assert float(draft_features(_reply("```\nls\n```"), [any_fence, TASK])[FORMAT]) == 0.0
    # The demand without a fenced example to go by is not judged
    unshown = _system("Your response must contain exactly ONE bash code block.")
    assert float(draft_features(_reply("no block"), [unshown, TASK])[FORMAT]) == 0.0
    # A tool-calling reply is judged by its calls, not its fences
    call = _call({"command": "ls"}, "bash")
    assert float(draft_features(call, [MINI_SYSTEM, TASK], EDITOR)[FORMAT]) == 0.0


def test_the_fence_counted_is_the_one_the_prompt_shows() -> None:
    """mini-swe-agent 2.x's prompt still says "bash code block" but shows (and parses) a fence of
    its own; its XML variant says the same and shows a tag, no fence."""
    tagged = _system(
        "Your response must contain exactly ONE bash code block with ONE command.\n"
        "<format_example>\nTHOUGHT: why\n\n```mswea_bash_command\nyour_command_here\n```\n</format_example>"
    )
    one = _reply("THOUGHT: look\n\n```mswea_bash_command\nls -la\n```")
    two = _reply("```mswea_bash_command\nls\n```\n```mswea_bash_command\npwd\n```")
    plain = _reply("THOUGHT: look\n\n```bash\nls -la\n```")
    assert [float(draft_features(d, [tagged, TASK])[FORMAT]) for d in (one, two, plain)] == [0.0, 1.0, 1.0]
    xml = _system(
        "Your response must contain exactly ONE bash code block with ONE command.\n"
        "<format_example>\nTHOUGHT: why\n\n<mswea_bash_command>your_command_here</mswea_bash_command>\n</format_example>"
    )
    answer = _reply("THOUGHT: look\n\n<mswea_bash_command>ls -la</mswea_bash_command>")
    twice = _reply("<mswea_bash_command>ls</mswea_bash_command>\n<mswea_bash_command>pwd</mswea_bash_command>")
    fenced = _reply("THOUGHT: look\n\n```bash\nls -la\n```")
    assert [float(draft_features(d, [xml, TASK])[FORMAT]) for d in (answer, twice, fenced)] == [0.0, 1.0, 1.0]


def test_a_reply_without_a_call_where_every_reply_must_hold_one() -> None:
    """mini-swe-agent 2.x's tool-calling format says so in the task's first message (its system
    prompt is one line), and its parser refuses a reply with no call."""
    system = _system("You are a helpful assistant that can interact with a computer shell to solve programming tasks.")
    task = {
        "role": "user",
        "content": "<pr_description>Fix the parser.</pr_description>\n**CRITICAL REQUIREMENTS:**\n"
        "- Your response MUST include AT LEAST ONE bash tool call.",
    }
    prose = _reply("THOUGHT: I should look at the parser first.")
    call = _call({"command": "ls"}, "bash")
    assert float(draft_features(prose, [system, task])[FORMAT]) == 1.0
    assert float(draft_features(call, [system, task], EDITOR)[FORMAT]) == 0.0
    # A later user turn saying so (a tool result, a file shown) is not the contract.
    later = [system, TASK, _reply("ok"), {"role": "user", "content": task["content"]}]
    assert float(draft_features(prose, later)[FORMAT]) == 0.0


def test_odd_shapes_give_zeros_not_errors() -> None:
    create = _call({"command": "create", "path": "/repo/x.py", "file_text": "x"})
    odd: list[Any] = [
        TASK,
        "not a message",
        None,
        {"role": "tool", "content": [{"type": "text", "text": "/repo/x.py"}]},
    ]
    assert _values(create, odd)[1] == 1.0  # content parts are read; the rest is passed over
    assert _values(_call({"command": "create", "path": 7, "file_text": "x"}), odd) == (0.0, 0.0)
    assert _values({"role": "assistant", "tool_calls": "nonsense"}, odd) == (0.0, 0.0)
    system_parts = {
        "role": "system",
        "content": [{"type": "text", "text": "Reply with exactly one bash code block:\n```bash\nls\n```"}],
    }
    assert float(draft_features(_reply("no block"), [system_parts, TASK])[FORMAT]) == 1.0


REQUIRED = DRAFT_FEATURE_NAMES.index("draft_misses_required")
BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}
LOOKUP = {  # Anthropic's shape: a flat tool with `input_schema`
    "name": "get_reservation",
    "input_schema": {"type": "object", "properties": {"reservation_id": {}}, "required": ["reservation_id"]},
}


@pytest.mark.parametrize(
    ("draft", "tools", "misses"),
    [
        (_call({"command": "ls"}, "bash"), [BASH], 0.0),
        (_call({"cmd": "ls"}, "bash"), [BASH], 1.0),  # mini-swe-agent 2.x refuses a bash call without `command`
        (_call({}, "bash"), [BASH], 1.0),
        (_call({"reservation_id": "ZFA04Y"}, "get_reservation"), [LOOKUP], 0.0),
        (_call({"id": "ZFA04Y"}, "get_reservation"), [LOOKUP], 1.0),
        (_call({"cmd": "ls"}, "bash"), None, 0.0),  # no schema declared: nothing to check against
        (_call({"cmd": "ls"}, "other"), [BASH], 0.0),  # an undeclared tool: not this value's concern
        (_call("not json", "bash"), [BASH], 0.0),  # not a JSON object: neither
        (_reply("```bash\nls\n```"), [BASH], 0.0),
    ],
)
def test_a_call_without_an_argument_its_tool_requires(draft: dict[str, Any], tools: Any, misses: float) -> None:
    assert float(draft_features(draft, [TASK], tools)[REQUIRED]) == misses


def test_odd_schemas_are_passed_over() -> None:
    odd: list[Any] = [  # (the gateway refuses a tool that is not an object before any judge)
        {"type": "function", "function": "nonsense"},
        {"type": "function", "function": {"name": "bash", "parameters": "x"}},
        {"name": "bash", "parameters": {"required": "command"}},
    ]
    assert float(draft_features(_call({}, "bash"), [TASK], odd)[REQUIRED]) == 0.0


INVALID = DRAFT_FEATURE_NAMES.index("draft_invalid")


@pytest.mark.parametrize(
    ("draft", "invalid"),
    [
        (_call("not json", "bash"), 1.0),  # arguments its harness cannot parse
        (_call({"command": "ls"}, "rm_rf_tool"), 1.0),  # a tool the request does not declare
        (_call({"command": "ls"}, "bash"), 0.0),
    ],
)
def test_a_call_its_harness_cannot_read_is_scored_at_least_the_floor(draft: dict[str, Any], invalid: float) -> None:
    """A draft whose tool call has arguments that are not a JSON object, or names a tool the
    request does not declare, is refused by every harness: served, it scores at least its floor
    (it scored 0.09 on an edge's draft, under sound calls, and went to the agent)."""
    from judge.draft import SLIP_FLOORS, floored
    from judge.features import N_FEATURES

    values = draft_features(draft, [TASK], [BASH])
    assert float(values[INVALID]) == invalid
    vector = [0.0] * N_FEATURES + [float(v) for v in values]
    assert floored(0.09, vector) == (SLIP_FLOORS["draft_invalid"] if invalid else 0.09)
