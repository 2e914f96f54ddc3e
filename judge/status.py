"""The harness-status label: whether a step's action failed, read from what the agent's harness
reported about it (exit codes, tool errors, the harness's own error messages), never from the
content of the files the action showed.

`judge/signals.py` scans any text for error words; as a label that is leaky: a traceback in a
docstring or `except AttributeError:` in a file view counts as a failure, grep's exit 1 for "no
match" too, while an editor's `No replacement was performed` or a harness's format error does
not. Here, per step:

1. a harness error message (mini-swe-agent's format errors and timeouts, SWE-agent's and
   OpenHands' editor errors, Terminus-2's parsing errors, Claude Code's `<tool_use_error>`,
   Codex's patch errors, Aider's unmatched SEARCH blocks, a harness's nudge to keep working)
   means failed;
2. else the last exit status the harness reported (`<returncode>`, OpenHands'
   `[Command finished with exit code N]`, Codex's `exit_code`, Claude Code's `Exit code N`):
   non-zero is failed, except a search (grep, rg, find, …) that exits 1 with no output: it found
   nothing, which is an answer;
3. a command that runs code (python, pytest, node, go test, cargo test, make, …) whose output
   ends in an uncaught exception or a failing-tests summary failed, whatever the exit status
   (a `| tail` hides it);
4. a tool that is not a shell (an editor, a plain chat's function) whose result opens with an
   error (`Error:`, `ERROR:`, `{"error": …}`) failed, and so did any tool whose result the client
   flagged as an error (Anthropic's `is_error`, an MCP tool's `isError`: `TOOL_ERROR_MARKER`
   opens its text) where no exit status says otherwise, a search that found nothing aside.

A shell's own "command not found" under an exit status of 0 (a `|| true` hid it) failed too,
where the harness reports exit statuses (per command, so no earlier output is on screen) and the
command did not print a file. Where a harness reports no exit status but gives each command's
own output (SWE-agent 0.x), the shell's own diagnostics about the command (`/bin/bash: line 12:
cd: x: No such file or directory`, a program or a script's program not found) failed; not on a
terminal screen (Terminus-2), which may still show an earlier command's.

Anything else did not fail: printing a file (cat, sed -n, head, nl, an editor's view) never
makes a step positive, whatever the file holds.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache
from typing import Any

import orjson

from judge.literals import Literals

# 1. The harnesses' own messages about an action they could not run or that went wrong.
# Each: the harness, words one of which the text must hold (a fast `in` scan that spares the
# pattern's search on most results), and the pattern.
HARNESS_ERRORS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    # mini-swe-agent: a reply without exactly one bash block, a command killed for time.
    # (2.x: also in the `<mswea_bash_command>` block of its XML format)
    (
        "mini-swe-agent",
        ("EXACTLY ONE",),
        re.compile(r"Please always provide EXACTLY ONE action in (?:triple backticks|the)"),
    ),
    # 2.x with tool calls: a reply its parser refused (no call, unknown tool, arguments not JSON,
    # no `command`), and a reply cut off by the output-token limit before its action.
    ("mini-swe-agent", ("Tool call error:",), re.compile(r"\A\s*Tool call error:\s*<error>")),
    (
        "mini-swe-agent",
        ("output token limit",),
        re.compile(r"\A\s*Your previous response reached the output token limit"),
    ),
    (
        "mini-swe-agent",
        ("The last command <command>",),
        # (`\s+`: a terminal recording wraps long lines, between any two words)
        re.compile(r"The last command <command>.*?</command>\s+timed\s+out\s+and\s+has\s+been\s+killed", re.S),
    ),
    ("mini-swe-agent", ("No tool call",), re.compile(r"^No tool calls? found", re.M)),
    # mini-swe-agent's refusal of a long output: the model must run something else to see it.
    ("mini-swe-agent", ("too long",), re.compile(r"<warning>\nThe output of your last command was too long\.")),
    # SWE-agent 0.x/1.x: the edit tools' refusals and its format errors.
    ("swe-agent", ("proposed edit",), re.compile(r"Your proposed edit has introduced new syntax error")),
    (
        "swe-agent",
        ("Your edit", "Your changes"),
        re.compile(r"Your edit was not applied|Your changes have NOT been applied"),
    ),
    (
        "swe-agent",
        ("Your output", "Your last output"),
        re.compile(r"Your output was not formatted correctly|Your last output did not use any tool calls"),
    ),
    ("swe-agent", ("Usage: ",), re.compile(r"^Usage: (?:edit|goto|open|search_\w+|create|scroll_\w+)\b", re.M)),
    ("swe-agent", ("rror: ",), re.compile(r"^(?:Error|ERROR): (?:File|Line|<start_line>|<line>)\b", re.M)),
    ("swe-agent", ("not found",), re.compile(r"^File \S+ not found$", re.M)),
    ("swe-agent", ("TIMED OUT",), re.compile(r"^EXECUTION TIMED OUT", re.M)),  # 0.x: a command killed for time
    # 1.x: its function-calling parser's refusals, a command `bash -n` refused, one killed for
    # time, one on its blocklist, a reply that was no JSON or held no message.
    (
        "swe-agent",
        ("Your last output", "Your action", "Your output could not"),
        re.compile(
            r"Your last output included multiple tool calls|Your action could not be parsed properly"
            r"|Your output could not be parsed as JSON"
        ),
    ),
    ("swe-agent", ("was NOT executed",), re.compile(r"Your bash command contained syntax errors and was NOT executed")),
    (
        "swe-agent",
        ("was cancelled because",),
        re.compile(r"\A\s*The command .* was cancelled because it took more than", re.S),
    ),
    ("swe-agent", ("is not supported by",), re.compile(r"\A\s*Operation '.*' is not supported by this environment\.")),
    ("swe-agent", ("No message found",), re.compile(r"\A\s*No message found in model response\.")),
    # The str_replace editor (SWE-agent 1.x, OpenHands): its errors open its result.
    ("editor", ("No replacement",), re.compile(r"No replacement was performed")),
    (
        "editor",
        ("Invalid `",),
        re.compile(r"\A\s*(?:ERROR:|Error:)?\s*Invalid `(?:path|view_range|insert_line)` parameter"),
    ),
    ("editor", ("does not exist",), re.compile(r"\A\s*(?:ERROR:|Error:)?\s*The path \S+ does not exist")),
    ("editor", ("File already exists",), re.compile(r"\A\s*(?:ERROR:|Error:)?\s*File already exists at: ")),
    # OpenHands: an action it could not execute.
    (
        "openhands",
        ("Error occurred", "Error executing"),
        re.compile(r"\[Error occurred in processing last action\]|Error executing command: "),
    ),
    (
        "openhands",
        ("Error",),
        re.compile(r"\A\s*(?:AgentStuckInLoopError|FunctionCallValidationError|FunctionCallNotExistsError)"),
    ),
    # The OpenHands SDK (V1): a call to a tool the agent lacks, arguments it refused, a tool
    # that raised (its AgentErrorEvent, the tool result the model sees).
    (
        "openhands",
        ("not found. Available", "Error validating tool", "Error executing tool"),
        re.compile(r"\A\s*(?:Tool '[^'\n]+' not found\. Available:|Error (?:validating|executing) tool '[^'\n]+':)"),
    ),
    # The OpenHands SDK's own words in a tool result: a command or tool that failed, arguments
    # it could not validate, an action the confirmation policy rejected.
    (
        "openhands",
        ("An error occurred during", "There was an error during", "Error validating args", "Action rejected"),
        re.compile(
            r"\[An error occurred during execution\.\]|\[There was an error during command execution\.\]"
            r"|\A\s*(?:Error validating args|Action rejected:)"
        ),
    ),
    # OpenHands: a command killed for time (not its soft `no new output after N seconds`: the
    # command runs on and the agent may wait for it).
    ("openhands", ("timed out after",), re.compile(r"^\[The command timed out after [\d.]+ seconds\.", re.M)),
    # Terminus-2: a reply it could not parse.
    (
        "terminus-2",
        ("Previous response", "JSON"),
        re.compile(r"Previous response had (?:parsing )?errors|\A\s*ERROR: (?:No valid JSON|Invalid JSON)"),
    ),
    # Claude Code: a tool call it refused or that errored.
    ("claude-code", ("<tool_use_error>",), re.compile(r"<tool_use_error>")),
    # Codex CLI: a patch that did not apply, a call it rejected.
    (
        "codex",
        ("apply_patch", "Invalid patch", "failed to parse"),
        re.compile(r"apply_patch verification failed|Invalid patch|failed to parse function arguments"),
    ),
    # Codex CLI: a call to a tool it does not have.
    ("codex", ("unsupported call",), re.compile(r"\A\s*unsupported call: ")),
    # Aider: edits that did not apply, replies not in its edit format.
    (
        "aider",
        ("SearchReplace", "SEARCH/REPLACE"),
        re.compile(r"SearchReplaceNoExactMatch|SEARCH/REPLACE blocks? failed to match"),
    ),
    ("aider", ("did not conform",), re.compile(r"The LLM did not conform to the edit format")),
    # Aider's own checks after an edit: its test command's output, which it sends back only when
    # the command failed (`--auto-test`), and its linter's errors in the files edited.
    (
        "aider",
        ("And got this output", "Fix any errors below"),
        re.compile(
            r"\A\s*(?:I ran this command:\n.*?\nAnd got this output:|# Fix any errors below, if possible\.)", re.S
        ),
    ),
    # The OpenAI Agents SDK: a function tool that raised (its default words for any error, the
    # error itself withheld) or that ran out of time.
    (
        "openai-agents",
        ("An error occurred while", "timed out after"),
        re.compile(
            r"\A\s*(?:An error occurred while running the tool\. Please try again\."
            r"|Tool '[^'\n]+' timed out after [\d.]+ seconds\.)"
        ),
    ),
    # smolagents: a step whose tool call or code failed (the error, then its plea to retry).
    ("smolagents", ("Now let's retry",), re.compile(r"^Error:\n(?:.*\n)*?Now let's retry: take care not to", re.M)),
    # A harness nudging a model that answered without acting.
    (
        "nudge",
        ("Please continue", "You forgot", "did not call", "did not use"),
        re.compile(
            r"Please continue working on the task|You forgot to use a function call|did not (?:call|use) a tool"
        ),
    ),
)
# Each harness message's words, with its place in HARNESS_ERRORS: one pass over them all finds
# the few messages worth a regex (an `any` per message cost three times as much per result).
_HARNESS_WORDS: tuple[tuple[str, int], ...] = tuple(
    (word, index) for index, (_, words, _) in enumerate(HARNESS_ERRORS) for word in words
)
# Looked for in one pass over a result's edges (each step's new turn is read with them).
_HARNESS_LITERALS = Literals([word for word, _ in _HARNESS_WORDS])

# 2. Exit statuses, as each harness reports them (the last one in the result counts).
# Each: a word the text must hold, and the pattern (literal-led: found by a fast scan).
_EXITS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<returncode>", re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")),  # mini-swe-agent
    # OpenHands (the importer's rendering of its exit_code metadata)
    ("[Command finished", re.compile(r"\[Command finished with exit code (-?\d+)\]")),
    ("[The command completed", re.compile(r"\[The command completed with exit code (-?\d+)\.\]")),  # OpenHands
    ('"exit_code"', re.compile(r"\"exit_code\"\s*:\s*(-?\d+)")),  # Codex CLI's function_call_output metadata
    ("Exit code", re.compile(r"(?:^|\n)Exit code:? (-?\d+)\b")),  # Codex CLI (newer), Claude Code's Bash tool
    ("Process exited", re.compile(r"(?:^|\n)Process exited with code (-?\d+)\b")),
)
# The harnesses' own lines around an output, removed before reading what the program printed.
_STATUS_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<returncode>", re.compile(r"<returncode>.*?</returncode>")),
    ("output>", re.compile(r"</?output>")),
    ("[Command finished", re.compile(r"\[Command finished with exit code -?\d+\]")),
    ("[The command completed", re.compile(r"\[The command completed with exit code -?\d+\.\]")),
    ("Exit code", re.compile(r"Exit code:? -?\d+.*")),
    ("Wall time", re.compile(r"Wall time:.*")),
    ("Output:", re.compile(r"(?m)^Output:$")),
    ("[Current working", re.compile(r"\[Current working directory(?: is|:) .*\]")),
    ("[Python interpreter", re.compile(r"\[Python interpreter: .*\]")),
    ("Process exited", re.compile(r"Process exited with code -?\d+.*")),
)


def _exit_codes(text: str) -> list[str]:
    """The exit statuses the harness reported, in the order they appear."""
    found = [(m.start(), m.group(1)) for word, pattern in _EXITS if word in text for m in pattern.finditer(text)]
    return [code for _, code in sorted(found)]


def _without_status(text: str) -> str:
    for word, pattern in _STATUS_LINES:
        if word in text:
            text = pattern.sub("", text)
    return text


# 3. Output that ends a failed program: an uncaught traceback, a failing-tests summary.
_TRACEBACK_TAIL = re.compile(
    r"Traceback \(most recent call last\):\n(?:[ \t].*\n|\n)*[A-Za-z_][\w.]*(?::.*)?(?:\n.*){0,5}\Z"
)
_FAILED_WORDS = ("failed", "error", "FAIL", "ERR!", "***")
_TESTS_FAILED = re.compile(
    r"=+ (?:.*\b)?\d+ (?:failed|errors?)\b.*=+\s*\Z"  # pytest's summary line
    r"|^FAILED \(.*(?:failures|errors)=\d+.*\)\s*\Z"  # unittest
    r"|^(?:FAIL|--- FAIL:.*|FAIL\t.*)\s*\Z"  # go test
    r"|test result: FAILED\..*\s*\Z"  # cargo test
    r"|^Tests?:\s+\d+ failed.*(?:\n.*){0,4}\Z"  # jest
    r"|^make(?:\[\d+\])?: \*\*\* .*Error \d+\s*\Z"  # make
    r"|^npm ERR! .*(?:\n.*){0,4}\Z",
    re.M,
)
_TAIL_CHARS = 2000  # a summary is at the end: a long output is judged by its tail
HARNESS_MESSAGE = "error message"  # the reason's ending when a harness's own message says it failed
_EDGE_CHARS = 4096  # of each end of a result, where harnesses put their messages and statuses
# A terminal screen (Terminus-2) ends with the shell's prompt after the program's last words.
_PROMPT_CHARS = 300  # the last line or two, where a prompt is
_PROMPT_TAIL = re.compile(r"(?:\n[^\n]*@[^\n]*:[^\n]*[#$] ?)+\s*\Z")  # user@host:/dir#

# The shell's own word that a program it was asked to run is not there (`/bin/sh: 1: ps: not
# found`, `bash: xxd: command not found`): a status, not a program's output, so it counts even
# where `|| true` or a later command made the exit status 0.
_NOT_FOUND = re.compile(
    r"^(?:/bin/|/usr/bin/)?(?:ba|da|z)?sh: (?:line )?(?:\d+: )?([^\s:]+): (?:command )?not found$", re.M
)
# The shell's own diagnostics about the command line it was given (bash numbers the lines of a
# `-c` string: `/bin/bash: line 12: cd: x: No such file or directory`, `… syntax error: …`,
# `… javac: command not found`), and a script's (`./run.sh: line 2: mvn: command not found`).
_SHELL_SAYS = re.compile(r"^(?:/bin/|/usr/bin/)?bash: line \d+: ", re.M)
_SCRIPT_NOT_FOUND = re.compile(r"^(\S+): line \d+: [^\s:]+: command not found$", re.M)
_VIEWERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "sed", "awk", "grep", "jq", "bat"})

_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate", "git-grep"})
_RUNS_CODE = frozenset(
    {"python", "python3", "python2", "pytest", "py.test", "node", "npm", "npx", "yarn", "pnpm", "jest", "go",
     "cargo", "make", "ruby", "rspec", "java", "mvn", "gradle", "tox", "nox", "bash", "sh", "php", "perl",
     "deno", "bun", "dotnet", "ctest", "mocha", "vitest", "rake", "bundle", "uv", "poetry", "coverage"}
)  # fmt: skip
_PREFIXES = frozenset({"cd", "sudo", "time", "timeout", "env", "export", "source", "."})
# The words of a shell line as `shlex.split(line, comments=True)` makes them (POSIX quoting: '…'
# literal, "…" with \" and \\ escaped, \x outside quotes, # to the end of the line), by regex:
# shlex reads a character at a time in Python, ~10x the cost, and the label reads every step's
# command. `tests/judge/test_status.py` compares the two on random lines.
_WORD = re.compile(r"""(?:[^ \t\r\n'"\\#]|\\[\s\S]|'[^']*'|"(?:[^"\\]|\\[\s\S])*")+""")
_SPACE = re.compile(r"[ \t\r\n]*")
_PART = re.compile(r"""\\([\s\S])|'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|([^'"\\]+)""")
_IN_DOUBLE = re.compile(r"""\\(["\\])""")
_SHELL_TOOLS = frozenset({"bash", "execute_bash", "shell", "run", "terminal", "cmd", "execute_command", "exec_command"})
# What opens the text of a tool result its client flagged as an error: the gateway's Messages
# surface writes it for a `tool_result` with `is_error: true` (router/surfaces/messages/
# content.py, where a chat `tool` message has no such flag), and the Claude Code importer for its
# transcripts' flagged results (importers/events.py): one label for both.
TOOL_ERROR_MARKER = "[tool error] "
_ERROR_OPENING = re.compile(
    r"\A\s*(?:ERROR:|Error:|error:|<error>|\{\s*\"error\"\s*:|Exception:|Failed to |"
    + re.escape(TOOL_ERROR_MARKER)
    + ")"
)
# A fenced shell block (mini-swe-agent's ```bash, SWE-agent's bare ```): tagged ones first, so that
# the closing fence of a ```python block is never read as an opener.
_FENCE_TAGGED = re.compile(r"^```(?:bash|sh|shell)[ \t]*\n(.*?)^```", re.S | re.M)
_FENCE_BARE = re.compile(r"^```[ \t]*\n(.*?)^```", re.S | re.M)


def command_of(message: dict[str, Any]) -> tuple[str, bool]:
    """The command an assistant message ran and whether a shell ran it: a shell tool's
    `command`/`cmd`, a fenced bash block (mini-swe-agent, SWE-agent), Terminus-2's keystrokes;
    for any other tool, its name and sub-command (`str_replace_editor view`)."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        parts, shell = [], True
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name = str(function.get("name") or "")
            raw = function.get("arguments") or "{}"
            part, by_shell = (
                _call_command(name, raw) if isinstance(raw, str) and len(raw) <= _CACHED_TEXT else _call_in(name, raw)
            )
            parts.append(part)
            shell = shell and by_shell
        return "\n".join(parts), shell
    text = message.get("content")
    text = text if isinstance(text, str) else ""
    # A turn is read again at the next steps (judge/features.py reads the tail's turns): its
    # command, found by content, once.
    return _text_command(text) if len(text) <= _CACHED_TEXT else _command_in(text)


_CACHED_TEXT = 8192  # longer replies are read afresh: the cache must stay small


@lru_cache(maxsize=1024)
def _call_command(name: str, raw: str) -> tuple[str, bool]:
    return _call_in(name, raw)


def _call_in(name: str, raw: object) -> tuple[str, bool]:
    """One tool call's part of the command (its arguments as the call gave them) and whether a
    shell runs it."""
    try:
        args = orjson.loads(raw)  # type: ignore[arg-type]  # not text: refused as broken JSON is
    except (orjson.JSONDecodeError, TypeError):
        args = {}
    args = args if isinstance(args, dict) else {}
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):  # Codex's ["bash", "-lc", "…"]
        command = command[-1] if command[:2] in (["bash", "-lc"], ["bash", "-c"]) else shlex.join(map(str, command))
    if name.lower() in _SHELL_TOOLS and isinstance(command, str):
        return command, True
    return f"{name} {command if isinstance(command, str) else ''}".strip(), False


@lru_cache(maxsize=1024)
def _text_command(text: str) -> tuple[str, bool]:
    return _command_in(text)


def _command_in(text: str) -> tuple[str, bool]:
    """The command of a reply without tool calls: its last fenced shell block, or Terminus-2's
    keystrokes."""
    blocks = _FENCE_TAGGED.findall(text) or _FENCE_BARE.findall(text)
    if blocks:
        return blocks[-1].strip(), True
    if text.lstrip().startswith("{") and '"keystrokes"' in text:  # Terminus-2 answers in JSON
        try:
            answer = orjson.loads(text)
        except orjson.JSONDecodeError:
            return "", True
        commands = answer.get("commands") if isinstance(answer, dict) else None
        keys = [str(c.get("keystrokes", "")) for c in commands or [] if isinstance(c, dict)]
        return "".join(keys).strip(), True
    return "", False


def _unquoted(word: str) -> str:
    if "'" not in word and '"' not in word and "\\" not in word:
        return word  # most words: nothing to undo
    out = []
    for match in _PART.finditer(word):
        escaped, single, double, plain = match.groups()
        if escaped is not None:
            out.append(escaped)
        elif single is not None:
            out.append(single)
        elif double is not None:
            out.append(_IN_DOUBLE.sub(r"\1", double))
        else:
            out.append(plain)
    return "".join(out)


def _after_space(line: str, at: int) -> int:
    space = _SPACE.match(line, at)
    return at if space is None else space.end()


def shell_words(line: str) -> list[str]:
    """`shlex.split(line, comments=True)`, the same words and the same ValueError (an unclosed
    quote, a trailing backslash)."""
    words: list[str] = []
    position = _after_space(line, 0)
    size = len(line)
    while position < size:
        if line[position] == "#":  # a comment, to the end of its line
            newline = line.find("\n", position)
            if newline < 0:
                break
            position = _after_space(line, newline + 1)
            continue
        match = _WORD.match(line, position)
        if match is None:
            raise ValueError("no closing quotation or escaped character")
        words.append(_unquoted(match.group()))
        position = _after_space(line, match.end())
    return words


@lru_cache(maxsize=256)
def _programs(command: str) -> tuple[str, ...]:
    """The program each simple command of a shell line runs (`cd x && python -m pytest | tail`
    -> python, tail), with `sudo`, `timeout 60`, `VAR=1` and the like skipped. Cached: the rules
    below ask for it only where they need it, and some ask twice."""
    programs = []
    for segment in re.split(r"&&|\|\||;|\||\n", command):
        try:
            words = shell_words(segment)
        except ValueError:
            words = segment.split()
        while words and (words[0] in _PREFIXES or "=" in words[0] or words[0].isdigit() or words[0].startswith("-")):
            if words[0] in ("cd", "source", "."):
                words = []  # its argument is a path, not a program
                break
            words = words[1:]
        if words:
            program = words[0].rsplit("/", 1)[-1]
            if program == "git" and len(words) > 1 and words[1] == "grep":
                program = "git-grep"
            programs.append(program)
    return tuple(programs)


def _runs_code(programs: tuple[str, ...]) -> bool:
    return any(p in _RUNS_CODE or re.fullmatch(r"python\d(?:\.\d+)?", p) for p in programs)


def _unwrapped(result: str) -> str:
    """Codex CLI's older shell results are JSON (`{"output": …, "metadata": {"exit_code": N}}`):
    the output, then its status as Codex's newer results say it. mini-swe-agent 2.x's own
    configuration writes its results as JSON too (`{"returncode": N, "output": …}`): read as its
    other formats write them (`_mini_json`)."""
    if result.startswith("{") and '"returncode"' in result[:40]:
        return _mini_json(result)
    if not result.startswith('{"output"'):
        return result
    try:
        parsed = orjson.loads(result)
    except orjson.JSONDecodeError:
        return result
    metadata = parsed.get("metadata") if isinstance(parsed, dict) else None
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if not isinstance(parsed.get("output"), str) or not isinstance(code, int):
        return result
    return f"{parsed['output']}\nExit code: {code}"


def _mini_json(result: str) -> str:
    """A mini-swe-agent 2.x JSON result as its XML-tag formats write the same (`<returncode>`,
    `<output>`; an output too long to show: its warning, head and tail; `<exception>`), so that
    one set of rules reads all three; `result` itself where it is not one."""
    try:
        parsed = orjson.loads(result)
    except orjson.JSONDecodeError:
        return result
    if not isinstance(parsed, dict) or not isinstance(parsed.get("returncode"), int):
        return result
    parts = []
    if isinstance(exception := parsed.get("exception_info"), str) and exception:
        parts.append(f"<exception>{exception}</exception>")
    parts.append(f"<returncode>{parsed['returncode']}</returncode>")
    head, tail = parsed.get("output_head"), parsed.get("output_tail")
    if isinstance(output := parsed.get("output"), str):
        parts.append(f"<output>\n{output}</output>")
    elif isinstance(head, str) and isinstance(tail, str):
        parts.append("<warning>\nThe output of your last command was too long.\n</warning>")
        parts.append(f"<output_head>\n{head}\n</output_head>\n<output_tail>\n{tail}\n</output_tail>")
    else:
        return result  # no output of either shape: some other JSON that names a return code
    return "\n".join(parts)


def failure_reason(command: str, shell: bool, results: list[str]) -> str | None:
    """Why the step whose action was `command` (run by a shell or not: `command_of`) failed,
    given what the harness returned (`results`); None when it did not."""
    text = "\n".join(_unwrapped(result) for result in results)
    if not text or text.isspace():
        return None
    # A harness's messages and statuses wrap the output (before it or after it): only the edges
    # are read, so that a long output costs no more than a short one and its middle (a file's
    # content) is never read as one.
    edges = text if len(text) <= 2 * _EDGE_CHARS else f"{text[:_EDGE_CHARS]}\n{text[-_EDGE_CHARS:]}"
    return _reason(command, shell, edges, text.lstrip().startswith(TOOL_ERROR_MARKER))


@lru_cache(maxsize=1024)  # of edges up to 8 KB: at most 8 MB held
def _reason(command: str, shell: bool, edges: str, marked: bool) -> str | None:
    """`failure_reason` from the result's edges (whether it opens with the tool-error marker:
    `marked`). Cached: the judge's features read each turn of the tail again at the next steps
    (judge/features.py), and the edges, not the whole result, are what is hashed."""
    # In HARNESS_ERRORS' order (the words are), each message once.
    for index in dict.fromkeys([_HARNESS_WORDS[k][1] for k in sorted(_HARNESS_LITERALS.found(edges))]):
        harness, _, pattern = HARNESS_ERRORS[index]
        if pattern.search(edges):
            return f"{harness} {HARNESS_MESSAGE}"
    # The programs the command ran (`_ran`) are read only where a rule needs them: splitting a
    # long command (a file written through a here-document) into shell words costs more than
    # every other rule, and most results need none.
    codes = _exit_codes(edges)
    if codes and int(codes[-1]) != 0:
        output = _without_status(edges).strip()
        # A search that found nothing (`grep x f`, `cd d && rg x`, `sed -n 1,9p f | grep x`: the
        # shell's status is the last program's).
        if codes[-1] == "1" and not output and _searched(command, shell):
            return None
        return f"exit code {codes[-1]}"
    # A shell's "not found" under an exit status of 0 (`ps aux | … || true`); not where the
    # command printed a file (a log may hold such a line), nor on a terminal screen, which shows
    # earlier commands' output too (no exit status there).
    if codes and "not found" in edges and _NOT_FOUND.search(edges):
        first = _first(command, shell)
        if first is not None and first not in _VIEWERS:
            return "command not found"
    # Where the harness reports no exit status but gives each command's own output (SWE-agent
    # 0.x): the shell's own diagnostics, a "not found" for a program this command ran or from a
    # script it ran; not on a terminal screen (it ends in the shell's prompt), which may show an
    # earlier command's, nor where the command printed a file.
    if (
        not codes
        and shell
        and command.strip()
        and ("line " in edges or "not found" in edges)
        and not _PROMPT_TAIL.search(edges[-_PROMPT_CHARS:])
        and _first(command, shell) not in _VIEWERS
    ):
        if any(m.group(1) in _ran(command, shell) for m in _NOT_FOUND.finditer(edges)):
            return "command not found"
        if any(m.group(1) in command for m in _SCRIPT_NOT_FOUND.finditer(edges)):
            return "command not found"
        if _SHELL_SAYS.search(edges):
            return "shell error"
    if shell:  # a command that runs code (`_runs_code`) ends in its failure
        tail = edges[-_TAIL_CHARS:]
        tail = _without_status(tail).rstrip()
        if "@" in tail[-_PROMPT_CHARS:]:
            tail = tail[:-_PROMPT_CHARS] + _PROMPT_TAIL.sub("", tail[-_PROMPT_CHARS:])
        tail += "\n"
        if "Traceback" in tail and _TRACEBACK_TAIL.search(tail) and _runs_code(_ran(command, shell)):
            return "uncaught exception"
        if (
            any(word in tail for word in _FAILED_WORDS)
            and _TESTS_FAILED.search(tail.rstrip())
            and _runs_code(_ran(command, shell))
        ):
            return "failing tests"
    if command and not shell and _ERROR_OPENING.match(edges):
        return "tool error"
    # A flagged shell result with no exit status in it (one with a status was judged above): the
    # flag is the status, unless the command only searched (a search that finds nothing exits 1).
    if shell and not codes and marked and not _searched(command, shell):
        return "tool error"
    return None


def _ran(command: str, shell: bool) -> tuple[str, ...]:
    return _programs(command) if shell else ()


def _first(command: str, shell: bool) -> str | None:
    """The first program the command ran (None: no shell command, or none found)."""
    ran = _ran(command, shell)
    return ran[0] if ran else None


def _searched(command: str, shell: bool) -> bool:
    """Whether the command only searched (a search that finds nothing exits 1)."""
    ran = _ran(command, shell)
    return bool(ran) and (ran[0] in _SEARCHES or ran[-1] in _SEARCHES)


def action_failed(action: dict[str, Any], results: list[str]) -> bool:
    """Whether the assistant message `action` failed, by what followed it (`failure_reason`)."""
    command, shell = command_of(action)
    return failure_reason(command, shell, results) is not None
