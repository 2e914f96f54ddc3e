"""The harness-status label (judge/status.py): per harness, its error messages and exit codes make
a step failed; a search that found nothing, and file content of any kind, do not; a failure a
pipe hid is still found."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from judge.status import action_failed, failure_reason

TRACEBACK = 'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    f()\nValueError: bad date\n'
DOCSTRING = '"""Example:\n\n    Traceback (most recent call last):\n    ...\n"""\ntry:\n    x()\nexcept AttributeError:\n    pass\n'
PYTEST_TAIL = "tests/test_dates.py:12: AssertionError\n=========== 1 failed, 4 passed in 0.12s ===========\n"


def fenced(command: str) -> dict[str, Any]:
    return {"role": "assistant", "content": f"THOUGHT: next.\n\n```bash\n{command}\n```"}


def called(name: str, **arguments: Any) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": orjson.dumps(arguments).decode()}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def terminus(keystrokes: str) -> dict[str, Any]:
    answer = {"analysis": "a", "plan": "p", "commands": [{"keystrokes": keystrokes}], "task_complete": False}
    return {"role": "assistant", "content": orjson.dumps(answer).decode()}


def mini(code: int, output: str) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def openhands(code: int, output: str) -> str:
    return f"{output}\n[Command finished with exit code {code}]"


def codex(code: int, output: str) -> str:
    return orjson.dumps({"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.1}}).decode()


def claude(code: int, output: str) -> str:
    return f"Exit code {code}\n{output}" if code else output


def plain(code: int, output: str) -> str:
    return f"{output}\nexit code: {code}" if code else output


# harness -> how it asks a shell to run a command, and how it reports the exit status
SHELLS = {
    "mini-swe-agent": (fenced, mini),
    "openhands": (lambda c: called("execute_bash", command=c), openhands),
    "codex": (lambda c: called("shell", command=["bash", "-lc", c]), codex),
    "claude-code": (lambda c: called("Bash", command=c), claude),
    "plain-chat": (lambda c: called("bash", command=c), lambda code, out: f"Exit code: {code}\n{out}"),
}


@pytest.mark.parametrize("harness", sorted(SHELLS))
def test_a_non_zero_exit_is_a_failure(harness: str) -> None:
    action, result = SHELLS[harness]
    assert action_failed(action("ls missing/"), [result(2, "ls: cannot access 'missing/'\n")])
    assert not action_failed(action("ls src/"), [result(0, "a.py\nb.py\n")])


@pytest.mark.parametrize("harness", sorted(SHELLS))
def test_a_search_that_found_nothing_is_not_a_failure(harness: str) -> None:
    action, result = SHELLS[harness]
    for command in (
        "grep -rn parse_week src/",
        "rg parse_week",
        "git grep -n parse_week",
        "cd /repo && grep -q x f",
        "sed -n 1,90p f.py | grep slots",
    ):
        assert not action_failed(action(command), [result(1, "")]), command
    # The same exit from a search that printed an error did fail (a bad path, a bad pattern).
    assert action_failed(action("grep -rn x nowhere/"), [result(2, "grep: nowhere/: No such file or directory\n")])


@pytest.mark.parametrize("harness", sorted(SHELLS))
def test_reading_a_file_never_fails_a_step_whatever_it_holds(harness: str) -> None:
    action, result = SHELLS[harness]
    for command in ("cat src/dates.py", "sed -n 1,40p src/dates.py", "head -50 log.txt", "nl -ba src/dates.py"):
        for content in (DOCSTRING, TRACEBACK, PYTEST_TAIL, "Error: bad\nFAILED\n"):
            assert not action_failed(action(command), [result(0, content)]), (command, content)


@pytest.mark.parametrize("harness", sorted(SHELLS))
def test_code_that_failed_behind_a_pipe_is_a_failure(harness: str) -> None:
    action, result = SHELLS[harness]
    assert action_failed(action("python -m pytest tests/ 2>&1 | tail -5"), [result(0, PYTEST_TAIL)])
    assert action_failed(action("cd /repo && python repro.py | head -20"), [result(0, TRACEBACK)])
    assert not action_failed(action("python -m pytest tests/ | tail -3"), [result(0, "==== 5 passed in 0.1s ====\n")])


def test_mini_swe_agent_messages() -> None:
    assert failure_reason("", False, ["Please always provide EXACTLY ONE action in triple backticks, found 2 actions."])
    timeout = "The last command <command>python slow.py</command> timed out and has been killed.\n"
    assert action_failed(fenced("python slow.py"), [timeout])
    # As a terminal recording keeps it (terminal-bench's agent.log): the line wrapped.
    wrapped = "The last command <command>pip install numpy scipy pandas</command>  \ntimed out and has been killed.\n"
    assert action_failed(fenced("pip install numpy scipy pandas"), [wrapped])
    wrapped = "The last command <command>pip install fasttext</command> timed out and has been  \nkilled.\n"
    assert action_failed(fenced("pip install fasttext"), [wrapped])
    too_long = "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\nPlease try"
    assert action_failed(fenced("pip show mteb"), [too_long])
    assert action_failed(fenced("echo"), ["Please continue working on the task."])


def mini_json(code: int, output: str) -> str:
    """A result as mini-swe-agent 2.x's own configuration (`mini.yaml`) writes it."""
    return orjson.dumps({"returncode": code, "output": output}, option=orjson.OPT_INDENT_2).decode()


def test_mini_swe_agent_2_messages() -> None:
    bash = called("bash", command="python repro.py")
    # Its tool-call parser's refusals, whatever the error inside.
    for error in (
        "No tool calls found in the response. Every response MUST include at least one tool call.",
        "Unknown tool 'python'.",
        "Missing 'command' argument in bash tool call.",
        "Error parsing tool call arguments: Expecting value.",
    ):
        refused = f"Tool call error:\n\n<error>\n{error}\n</error>\n\nHere is general guidance on how to submit"
        assert failure_reason("", False, [refused]), error
    cut = "Your previous response reached the output token limit (finish_reason=length) before you produced a tool call"
    assert failure_reason("", False, [cut])
    xml = "Please always provide EXACTLY ONE action in the `<mswea_bash_command>` block, found 0 actions."
    assert failure_reason("", False, [xml])
    timeout = "<exception>An error occurred while executing the command: timed out after 60 seconds</exception>"
    assert action_failed(bash, [f"{timeout}\n<returncode>-1</returncode>\n<output>\n</output>"])
    # Its JSON results: the exit status, a failure a pipe hid, an output too long to show.
    assert action_failed(bash, [mini_json(2, "python: can't open file 'repro.py'\n")])
    assert not action_failed(bash, [mini_json(0, "ok\n")])
    assert action_failed(called("bash", command="python repro.py | tail -5"), [mini_json(0, TRACEBACK)])
    assert not action_failed(called("bash", command="cat repro.py"), [mini_json(0, TRACEBACK)])
    assert not action_failed(called("bash", command="grep -rn nope src/"), [mini_json(1, "")])
    too_long = '{\n  "returncode": 0,\n  "output_head": "a",\n  "output_tail": "b",\n  "elided_chars": 12000,\n  "warning": "Output too long."\n}'
    assert action_failed(called("bash", command="cat big.log"), [too_long])
    # A file of JSON that happens to hold the key is the file's content.
    assert not action_failed(called("bash", command="cat r.json"), ['{\n"a": {"returncode": 3}}'])
    assert not action_failed(called("run"), ['{"returncode": 0, "stdout": "ok"}'])  # no output of mini's shapes


def test_swe_agent_1_messages() -> None:
    for message in (
        "Your last output included multiple tool calls!\nPlease make sure your output includes a thought and exactly _ONE_ function call.",
        "Your action could not be parsed properly: Unexpected argument(s): pattern.\nMake sure your function call",
        "Your output could not be parsed as JSON. Please make sure your output 1) is valid JSON",
        "Your bash command contained syntax errors and was NOT executed. Please fix the syntax errors and try again.",
        "The command 'python -m http.server' was cancelled because it took more than 30 seconds. Please try",
        "Operation 'vim' is not supported by this environment.",
        "No message found in model response.",
    ):
        assert failure_reason("vim a.py", True, [message]), message
    # The same words inside a file the step printed are the file's.
    assert not action_failed(
        fenced("cat notes.md"), ["# Notes\nOperation 'vim' is not supported by this environment.\n"]
    )


# Harnesses that report an exit status of 0 too (Claude Code's Bash tool says only a non-zero one).
REPORTS_ZERO = ("codex", "mini-swe-agent", "openhands", "plain-chat")


@pytest.mark.parametrize("harness", REPORTS_ZERO)
def test_the_shells_not_found_counts_where_the_exit_status_hid_it(harness: str) -> None:
    action, result = SHELLS[harness]
    hidden = "ps aux | grep service.py | awk '{print $2}' | xargs kill -9 2>/dev/null || true"
    assert action_failed(action(hidden), [result(0, "/bin/sh: 1: ps: not found\n")])
    checked = 'pgrep -f python || echo "none" && tail -n 3 run.log'
    assert action_failed(action(checked), [result(0, "/bin/sh: 1: pgrep: not found\nnone\nLoading model...\n")])
    assert action_failed(action("xxd -r data.hex > bin || true"), [result(0, "bash: xxd: command not found\n")])
    # A file that holds such a line is content, not the shell's word about this command.
    assert not action_failed(action("cat build.log"), [result(0, "/bin/sh: 1: ps: not found\n")])
    assert not action_failed(action("tail -5 build.log"), [result(0, "bash: xxd: command not found\n")])
    assert not action_failed(action("python run.py"), [result(0, "checked: ps not found, using /proc\n")])


def test_swe_agent_messages() -> None:
    view = called("str_replace_editor", command="view", path="/repo/dates.py")
    edit = called("str_replace_editor", command="str_replace", path="/repo/dates.py", old_str="a", new_str="b")
    assert action_failed(edit, ["No replacement was performed, old_str `a` did not appear verbatim in /repo/dates.py."])
    assert action_failed(view, ["The path /repo/nope.py does not exist. Please provide a valid path."])
    assert not action_failed(view, ["Here's the result of running `cat -n` on /repo/dates.py:\n" + DOCSTRING])
    syntax = "Your proposed edit has introduced new syntax error(s). Please read this error message carefully"
    assert action_failed(fenced("edit 3:4\nx = (\nend_of_edit"), [syntax])
    assert action_failed(fenced("goto"), ["Usage: goto <line_number>"])
    # SWE-agent 0.x reports no exit status: a test run's failing summary decides.
    assert action_failed(fenced("python -m pytest -q tests/test_dates.py"), [PYTEST_TAIL])
    assert not action_failed(fenced("open dates.py"), ["[File: /repo/dates.py (40 lines total)]\n" + TRACEBACK])


def test_openhands_messages() -> None:
    edit = called("str_replace_editor", command="str_replace", path="/w/a.py", old_str="x", new_str="y")
    assert action_failed(edit, ["ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim."])
    assert action_failed(edit, ["ERROR:\nInvalid `path` parameter: /w/a.py. The path /w/a.py does not exist."])
    assert action_failed(called("execute_bash", command="ls"), ["[Error occurred in processing last action]"])
    killed = (
        "Serving on :8000\n[The command timed out after 120.0 seconds. You may wait longer to see additional output"
    )
    assert action_failed(called("execute_bash", command="python -m http.server"), [killed])
    # The SDK (V1)'s errors for a call it could not run.
    terminal = called("terminal", command="ls")
    for error in (
        "Tool 'str_replace_editor' not found. Available: ['terminal', 'finish']",
        "Error validating tool 'terminal': 1 validation error for TerminalAction. Parameters: {}",
        "Error executing tool 'terminal': invalid argument combination",
        # Its own words in the tool result the model sees.
        "Traceback (most recent call last):\n  ...\n[An error occurred during execution.]",
        "npm ERR! missing script: build\n[There was an error during command execution.]",
        "Error validating args {'command': 'ls'} for tool 'terminal': field required",
        "Action rejected: the user declined to run this command",
    ):
        assert action_failed(terminal, [error]), error
    # Its soft timeout is no failure: the command runs on, the agent may wait for it.
    soft = "Epoch 1/10\n[The command has no new output after 30 seconds. You may wait longer to see additional output"
    assert not action_failed(called("execute_bash", command="python train.py"), [soft])
    read = called("str_replace_editor", command="view", path="/w/a.py")
    assert not action_failed(read, ["Here's the result of running `cat -n` on /w/a.py:\n" + DOCSTRING])


def test_openhands_command_status_as_its_model_sees_it() -> None:
    # What CodeActAgent shows its model after a command (the importer's line follows it).
    def shown(output: str, code: int) -> str:
        return (
            f"{output}\n[The command completed with exit code {code}.]\n[Current working directory: /w/django/db]"
            f"\n[Python interpreter: /opt/env/bin/python]\n[Command finished with exit code {code}]"
        )

    search = called("execute_bash", command='cd /w/django/db && grep -n "CAST" models/sql/compiler.py')
    assert not action_failed(search, [shown("", 1)])
    assert action_failed(called("execute_bash", command="python3 repro.py"), [shown("Some test cases failed!", 1)])
    assert not action_failed(called("execute_bash", command="python3 repro.py"), [shown("ok", 0)])
    # The newer rendering alone carries the status too.
    only = "python3: can't open file 'r.py': [Errno 2] No such file\n[The command completed with exit code 2.]"
    assert action_failed(called("execute_bash", command="python3 r.py"), [only])


def test_terminus_2_messages() -> None:
    # A terminal screen has no exit status: only the harness's messages and a run's tail count.
    assert action_failed(terminus("{bad"), ["Previous response had parsing errors:\nERROR: Invalid JSON"])
    assert not action_failed(terminus("ls /var/app\n"), ["ls: cannot access '/var/app': No such file\nroot@box:/# "])
    assert not action_failed(terminus("grep -r x /app\n"), ["root@box:/app# "])
    assert not action_failed(terminus("cat app.py\n"), [DOCSTRING + "root@box:/app# "])
    # The screen may still show an earlier command's "not found": no exit status, no verdict.
    assert not action_failed(terminus("ps aux || true\n"), ["bash: ps: command not found\nroot@box:/app# "])


def test_codex_messages() -> None:
    patch = called("apply_patch", input="*** Begin Patch")
    assert action_failed(patch, ["apply_patch verification failed: Failed to find expected lines in dates.py"])
    assert not action_failed(patch, ["Success. Updated the following files:\nM dates.py"])
    newer = "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAILED tests/test_dates.py::test_week\n"
    assert action_failed(called("shell", command=["bash", "-lc", "pytest -q"]), [newer])
    assert action_failed(called("nope_tool"), ["unsupported call: nope_tool"])


def test_claude_code_messages() -> None:
    assert action_failed(
        called("Edit", file_path="a.py"), ["<tool_use_error>File has not been read yet.</tool_use_error>"]
    )
    assert not action_failed(called("Read", file_path="a.py"), ["     1\t" + TRACEBACK])
    assert not action_failed(called("Grep", pattern="x"), ["No matches found"])


def test_aider_messages() -> None:
    answer = {"role": "assistant", "content": "dates.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n"}
    failed = "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH block failed"
    assert action_failed(answer, [failed])
    assert action_failed(answer, ["The LLM did not conform to the edit format."])
    assert not action_failed(answer, ["Applied edit to dates.py"])
    # Its checks after an edit: a test command's output (sent back only when it failed), lint errors.
    tested = "I ran this command:\n\npytest -q tests/\n\nAnd got this output:\n\n" + PYTEST_TAIL
    assert action_failed({"role": "assistant", "content": "Ok."}, [tested])
    linted = (
        "# Fix any errors below, if possible.\n\n## Running: flake8 dates.py\n\ndates.py:3:1: F821 undefined name 'x'"
    )
    assert action_failed(answer, [linted])
    # The same words inside a file Aider shows are the file's.
    assert not action_failed(answer, ["dates.py\n```\nI ran this command:\n\nls\n\nAnd got this output:\n```"])


def test_tau_bench_tool_errors() -> None:
    # tau-bench's tools answer a call they refuse with "Error: …" and anything else with data.
    update = called("update_reservation_flights", reservation_id="XEWRD9", cabin="economy", flights=[])
    assert action_failed(update, ["Error: flight HAT030 not available on date 2024-05-13"])
    assert action_failed(called("book_reservation", user_id="u"), ["Error: gift card balance is not enough"])
    assert not action_failed(update, ['{"reservation_id": "XEWRD9", "cabin": "economy", "flights": []}'])
    # A search that found no flight answered the question; a transfer or a think is no failure.
    assert not action_failed(called("search_direct_flight", origin="ATL", destination="LAS"), ["[]"])
    assert not action_failed(called("transfer_to_human_agents", summary="s"), ["Transfer successful"])
    assert not action_failed(called("think", thought="t"), [""])


def test_plain_chat_tool_errors() -> None:
    lookup = called("get_order", order_id="W1")
    assert action_failed(lookup, ["Error: order W1 not found"])
    assert action_failed(lookup, ['{"error": "unknown order"}'])
    assert not action_failed(lookup, ['{"order_id": "W1", "status": "Error: none, shipped"}'])
    # A reply with no action, then the user's words: nothing the harness reported.
    assert not action_failed({"role": "assistant", "content": "Done."}, ["error: it still crashes"])


# Harnesses that report no exit status: SWE-agent 0.x (the output alone) and Terminus-2 (a
# terminal screen, ending with the prompt). The cases that do not need one hold there too.
SCREENS = {
    "swe-agent": (fenced, lambda output: output),
    "terminus-2": (lambda c: terminus(c + "\n"), lambda output: output + "root@box:/app# "),
}


@pytest.mark.parametrize("harness", sorted(SCREENS))
def test_without_exit_codes_only_what_ran_and_the_harness_count(harness: str) -> None:
    action, screen = SCREENS[harness]
    assert not action_failed(action("grep -rn parse_week src/"), [screen("")])
    for content in (DOCSTRING, TRACEBACK, PYTEST_TAIL):
        assert not action_failed(action("cat src/dates.py"), [screen(content)])
    assert action_failed(action("python -m pytest tests/ 2>&1 | tail -5"), [screen(PYTEST_TAIL)])
    assert action_failed(action("python repro.py | head"), [screen(TRACEBACK)])
    assert not action_failed(action("python -m pytest tests/ | tail -3"), [screen("=== 5 passed in 0.1s ===\n")])


# SWE-agent 0.x's observation of a command: its output, then the state lines and the prompt.
def swe0(output: str) -> str:
    return f"{output}\n(Open file: /repo/Main.java)\n(Current directory: /repo)\nbash-$"


def test_swe_agent_0_shell_diagnostics_without_an_exit_status() -> None:
    # The shell's own word about the command it was given: a program not there, a builtin that
    # failed, a line it could not parse (a model's prose run as a command).
    assert action_failed(
        fenced("javac Repro.java && java Repro"), [swe0("/bin/bash: line 1284: javac: command not found")]
    )
    assert action_failed(
        fenced("cd fastjson/"), [swe0("/bin/bash: line 18216: cd: fastjson/: No such file or directory")]
    )
    prose = "/bin/bash: line 2: unexpected EOF while looking for matching `''\n/bin/bash: line 4: syntax error: unexpected end of file"
    assert action_failed(fenced("DISCUSSION\nLet's look at the file's end."), [swe0(prose)])
    # A script the command ran, whose program is not there.
    assert action_failed(fenced("./run_tests.sh"), [swe0("./run_tests.sh: line 2: mvn: command not found")])
    assert action_failed(fenced("bash build.sh"), [swe0("build.sh: line 4: javac: command not found")])
    # SWE-agent 0.x's own message for a command it killed for time.
    assert action_failed(fenced("sudo apt-get install curl"), [swe0("\nEXECUTION TIMED OUT")])
    # Content is not the shell's word: a file printed, a script's not-found for another script.
    assert not action_failed(fenced("cat build.log"), [swe0("/bin/bash: line 3: mvn: command not found")])
    assert not action_failed(fenced("./check.sh"), [swe0("other.sh: line 2: mvn: command not found")])
    assert not action_failed(fenced("python check.py"), [swe0("mvn not found on PATH, skipping")])
    # A search that found nothing is an answer.
    assert not action_failed(fenced('find_file "Main.java"'), [swe0('No matches found for "Main.java" in /repo')])


def test_a_terminal_screen_shows_earlier_commands_so_its_shell_lines_do_not_count() -> None:
    # Terminus-2's screen still shows the first try's error after the tool was installed.
    screen = "root@box:/app# xxd f\nbash: line 1: xxd: command not found\nroot@box:/app# apt-get install -y xxd && xxd f\n00000000: 6869  hi\nroot@box:/app# "
    assert not action_failed(terminus("apt-get install -y xxd && xxd f\n"), [screen])


def test_shell_words_are_shlexs_on_random_lines() -> None:
    """The label splits command lines by regex (`shell_words`): the words, and where it fails,
    must be shlex's (quotes, escapes, comments, every kind of whitespace)."""
    import random
    import shlex

    from judge.status import _programs, shell_words

    rng = random.Random(7)
    for alphabet in ("ab '\"\\#\t\r$x\n", "a '\"\\#\x0b\xa0é\n;|&"):
        for _ in range(40_000):
            line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
            try:
                expected: list[str] | str = shlex.split(line, comments=True)
            except ValueError:
                expected = "ValueError"
            try:
                got: list[str] | str = shell_words(line)
            except ValueError:
                got = "ValueError"
            assert got == expected, repr(line)
    assert _programs("cd repo && timeout 60 python -m pytest -x | tail -5") == ("python", "tail")
    assert _programs("grep -n 'a b' f.py # why") == ("grep",)
    assert _programs("FOO=1 env git grep x") == ("git-grep",)
    assert _programs("sed -n '1,20p' \"my file.py\" | grep -c 'def '") == ("sed", "grep")


def test_a_result_its_client_flagged_as_an_error_is_a_failure() -> None:
    """Anthropic's `is_error` (an MCP tool's `isError`), as the gateway's Messages surface and the
    Claude Code importer write it: the flag is the harness's status; a flagged search that found
    nothing still found nothing, and an exit status, where there is one, decides."""
    from judge.status import TOOL_ERROR_MARKER
    from router.surfaces.messages.content import ERROR_MARKER

    assert ERROR_MARKER == TOOL_ERROR_MARKER  # the gateway's rows and imported ones read alike
    issue = called("mcp__github__create_issue", title="x")
    assert action_failed(issue, [TOOL_ERROR_MARKER + "Validation Failed: body is too long"])
    assert not action_failed(issue, ['{"number": 12, "title": "x"}'])
    assert action_failed(called("Bash", command="npm run build"), [TOOL_ERROR_MARKER + "sh: 1: tsc: not found"])
    assert not action_failed(called("Bash", command="grep -rn parse_date src"), [TOOL_ERROR_MARKER])
    assert not action_failed(called("Bash", command="rg parse_date"), [TOOL_ERROR_MARKER + "Exit code 1\n"])
    # File content that happens to hold the marker is no flag.
    assert not action_failed(called("Read", file_path="notes.md"), ["     1\t[tool error] seen in logs"])
