"""Action types of the tool calls and commands of the frameworks the gateway sits behind."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from judge.actions import ActionType, classify_command, classify_message, message_action

R, S, W, E = ActionType.READ, ActionType.SEARCH, ActionType.WRITE, ActionType.EDIT
X, T, P, U, N = ActionType.EXECUTE, ActionType.TEST, ActionType.PLAN, ActionType.SUBMIT, ActionType.OTHER


def call(name: str, args: Any) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else orjson.dumps(args).decode()
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


TOOL_CASES = [
    # OpenHands
    ("execute_bash", {"command": "cat src/app.py"}, R),
    ("execute_bash", {"command": "cd /workspace && python -m pytest tests/ -x"}, T),
    ("execute_bash", {"command": "python reproduce.py"}, X),
    ("str_replace_editor", {"command": "view", "path": "/repo/a.py"}, R),
    ("file_editor", {"command": "view", "path": "/repo/a.py"}, R),  # the OpenHands agent SDK's
    ("file_editor", {"command": "create", "path": "/repo/b.py", "file_text": "x = 1"}, W),
    ("str_replace_editor", {"command": "create", "path": "/repo/b.py", "file_text": "x = 1"}, W),
    ("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "a", "new_str": "b"}, E),
    ("str_replace_editor", {"command": "insert", "path": "a.py", "insert_line": 3, "new_str": "b"}, E),
    ("think", {"thought": "the bug is in the parser"}, P),
    ("finish", {"message": "done"}, U),
    # SWE-agent
    ("bash", {"command": "find . -name '*.py' | head"}, S),
    ("submit", {}, U),
    ("open", {"path": "a.py"}, R),
    ("search_dir", {"search_term": "foo"}, S),
    # Claude Code
    ("Read", {"file_path": "/repo/a.py"}, R),
    ("Write", {"file_path": "/repo/a.py", "content": "x"}, W),
    ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, E),
    ("MultiEdit", {"file_path": "a.py", "edits": []}, E),
    ("Bash", {"command": "npm test"}, T),
    ("Grep", {"pattern": "TODO"}, S),
    ("Glob", {"pattern": "**/*.ts"}, S),
    ("TodoWrite", {"todos": []}, P),
    # Codex
    ("exec_command", {"cmd": "rg -n parse_args"}, S),
    ("shell", {"command": ["bash", "-lc", "sed -i 's/a/b/' x.py"]}, E),
    ("shell", {"command": ["ls", "-la"]}, S),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n-a\n+b\n*** End Patch"}, E),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: new.py\n+x = 1\n*** End Patch"}, W),
    # the demo's tools
    ("read_file", {"path": "src/stats.py"}, R),
    ("search", {"pattern": "median"}, S),
    ("edit_file", {"path": "a", "old": "x", "new": "y"}, E),
    ("write_file", {"path": "a", "content": "y"}, W),
    ("run_tests", {}, T),
    # tools no table names (MCP servers, business APIs): typed by the verb their name starts with
    ("get_user_details", {"user_id": "mia_li_3668"}, R),
    ("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-16"}, S),
    ("book_reservation", {"user_id": "u", "flight_number": "HAT030"}, W),
    ("update_reservation_flights", {"reservation_id": "ZFA04Y"}, E),
    ("cancel_reservation", {"reservation_id": "ZFA04Y"}, E),
    ("createIssue", {"title": "x"}, W),
    ("mcp__github__list_pull_requests", {}, S),
    ("jira.deleteTicket", {"id": 3}, E),
    ("calculate", {"expression": "2 + 2"}, X),
    ("transfer_to_human_agents", {"summary": "refund"}, U),
    # a known tool under an MCP server's or an extension's prefix
    ("mcp__filesystem__read_file", {"path": "a.py"}, R),
    ("developer__shell", {"command": "pytest -q"}, T),
    ("developer__text_editor", {"command": "write", "path": "a.py", "file_text": "x"}, W),
    ("save_memory", {"fact": "uses uv"}, W),
    # OpenHands' newer tools, Claude Code's background shell
    ("execute_ipython_cell", {"code": "print(1)"}, X),
    ("web_read", {"url": "https://docs.python.org"}, R),
    ("task_tracker", {"command": "plan"}, P),
    ("BashOutput", {"bash_id": "b1"}, R),
    # unknown tools and broken arguments
    ("frobnicate", {}, N),
    ("HTTPGet", {}, N),
    ("execute_bash", "{not json", N),
]


@pytest.mark.parametrize(("name", "args", "expected"), TOOL_CASES)
def test_tool_calls(name: str, args: Any, expected: ActionType) -> None:
    assert message_action(call(name, args)) == expected


COMMAND_CASES = [
    ("cat src/a.py", R),
    ("head -n 50 src/a.py", R),
    ("sed -n '1,80p' src/a.py", R),
    ("nl -ba src/a.py | sed -n '10,20p'", R),
    ("grep -rn 'def main' src/", S),
    ("cat src/a.py | grep foo", S),
    ("ls -la", S),
    ("git diff", R),
    ("git grep -n foo", S),
    ("sed -i 's/foo/bar/g' src/a.py", E),
    ("perl -pi -e 's/a/b/' x", E),
    ("git apply fix.patch", E),
    ("cat > src/new.py <<'EOF'\nimport os\nprint(os.getcwd())\nEOF", W),
    ("cat <<EOF > notes.md\nrm -rf /\nEOF", W),
    ("echo 'x = 1' > src/x.py", W),
    ("printf 'a\\n' >> log.txt", W),
    ("echo hello", X),
    ("echo hi > /dev/null", X),
    ("python script.py 2>&1 | tail -5", X),
    ("pytest -q tests/test_a.py", T),
    ("python -m pytest -x", T),
    ("python3 -m unittest discover", T),
    ("cd /repo && PYTHONPATH=. timeout 60 pytest", T),
    ("go test ./...", T),
    ("cargo test", T),
    ("make test", T),
    ("make", X),
    ("pip install -e .", X),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", U),
    ("cd /repo", N),
    ("", N),
]


@pytest.mark.parametrize(("command", "expected"), COMMAND_CASES)
def test_shell_commands(command: str, expected: ActionType) -> None:
    assert classify_command(command) == expected


def test_mini_swe_agent_fenced_bash_in_text() -> None:
    message = text("THOUGHT: I need to fix the edge case.\n\n```bash\nsed -i 's/< 0/<= 0/' src/x.py\n```")
    assert classify_message(message) == [E]


def test_terminus_keystrokes_in_json_content() -> None:
    reply = {
        "analysis": "tests fail",
        "plan": "look, then run the tests",
        "commands": [{"keystrokes": "cat app.py\n", "duration": 0.1}, {"keystrokes": "pytest -q\n", "duration": 5}],
        "task_complete": False,
    }
    assert classify_message(text(orjson.dumps(reply).decode())) == [R, T]
    assert message_action(text(orjson.dumps(reply).decode())) == T
    done = {"analysis": "all good", "plan": "", "commands": [], "task_complete": True}
    assert message_action(text("```json\n" + orjson.dumps(done).decode() + "\n```")) == U


def test_several_calls_name_the_most_consequential() -> None:
    message = call("read_file", {"path": "a"})
    message["tool_calls"].append({"id": "c2", "type": "function", "function": {"name": "edit_file", "arguments": "{}"}})
    assert classify_message(message) == [R, E]
    assert message_action(message) == E


def test_prose_has_no_action() -> None:
    assert classify_message(text("I believe the task is complete.")) == []
    assert message_action(text("I believe the task is complete.")) == N
