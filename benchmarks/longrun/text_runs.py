"""Generated runs shaped like the real ones of benchmarks/longrun/data (mini-swe-agent on
SWE-bench): the shape `benchmarks.longrun --shape text` sends.

What the real runs showed that the tool-call generator (`trajectory.run_messages`) did not:
the agent's actions are text, not tool calls (a thought, then a bash block, often a heredoc
writing a file's code), so 40–55% of a body's bytes are the assistant's, against 5%; the
observations are user messages (`<returncode>` and `<output>`), not tool messages; and a step's
growth is skewed, not flat (p50 about 0.55 x its mean, p90 about 2.8 x, outputs cut at 10,000
characters), so some late steps bring 8–12 KB of new text at once. Sizes here follow a
log-normal draw with those ratios; texts are this repository's sources, logs and test output
with the same sensitive values as the tool-call runs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchmarks.longrun.trajectory import REPO, RunShape, _log_lines, _source_files, sensitive_value

SYSTEM = (
    "You are a helpful assistant that can interact with a computer shell to solve programming tasks. "
    "Your response must contain exactly ONE bash code block with ONE command (or commands connected "
    "with && or ||), and a THOUGHT section before it explaining your reasoning. "
) * 3
OUTPUT_CAP = 10_000  # mini-swe-agent cuts an observation's output there
ASSISTANT_SHARE = 0.45  # of a step's new bytes, the assistant's (0.39-0.55 in the real runs)
THOUGHTS = (
    "I need to understand how {name} is used before changing it.",
    "The traceback points at {name}; let me look at the code around it.",
    "Let me run the reproduction script again to confirm the fix works.",
    "The test still fails, so the edge case is not handled yet.",
    "I will write a small script that reproduces the issue described in the PR.",
    "Now I should check the other callers of {name} so the change does not break them.",
)


def _thought(rng: random.Random, path: Path, size: int) -> str:
    name = path.stem
    sentences: list[str] = []
    while sum(len(s) + 1 for s in sentences) < size:
        sentences.append(rng.choice(THOUGHTS).format(name=name))
    return "THOUGHT: " + " ".join(sentences)


def _action(rng: random.Random, path: Path, size: int) -> str:
    """A thought and one bash block; the larger ones write a file's code through a heredoc."""
    relative = path.relative_to(REPO)
    if size < 900:
        command = rng.choice((f"cat {relative}", f"grep -n 'def ' {relative}", "python reproduce.py"))
        return f"{_thought(rng, path, size - 40)}\n\n```bash\n{command}\n```"
    text = path.read_text(errors="replace")
    code_size = int(size * 0.7)
    start = rng.randrange(max(1, len(text) - code_size))
    code = text[start : start + code_size]
    block = f"cat <<'EOF' > reproduce.py\n{code}\nEOF\npython reproduce.py"
    return f"{_thought(rng, path, size - len(block) - 20)}\n\n```bash\n{block}\n```"


def _observation(rng: random.Random, path: Path, values: list[str], size: int) -> str:
    kind = rng.random()
    if kind < 0.5:
        text = path.read_text(errors="replace")
        start = rng.randrange(max(1, len(text) - size))
        output = text[start : start + size]
    elif kind < 0.8:
        output = _log_lines(rng, values, max(1, size // 95))[:size]
    else:
        output = "\n".join(
            f"FAILED tests/test_{rng.randrange(50)}.py::test_case_{i} - AssertionError" for i in range(size // 60 + 1)
        )[:size]
    code = 0 if kind < 0.8 else 1
    return f"<returncode>{code}</returncode>\n<output>\n{output[:OUTPUT_CAP]}\n</output>"


def text_run_messages(seed: int, shape: RunShape) -> Iterator[list[dict[str, Any]]]:
    """The messages of each step of one run in mini-swe-agent's text shape, step 1 first."""
    rng = random.Random(seed)
    files = _source_files()
    values = [sensitive_value(rng, n) for n in range(shape.values_per_run)]
    task = f"<pr_description>\nFix the failing test (issue #{seed}). Reported by {values[0]}.\n</pr_description>"
    if shape.dump_values:
        dump = "\n".join(sensitive_value(rng, 10**6 + n) for n in range(shape.dump_values))
        task += "\nThe customer export that shows the problem:\n" + dump
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    mean = max(600, (shape.target_bytes - len(orjson.dumps(messages))) // shape.steps)
    for _ in range(shape.steps):
        yield messages
        path = files[rng.randrange(len(files))]
        # Log-normal with sigma 1 and mean `mean`: median 0.61 x, p90 2.2 x (the real runs'
        # growth: median 0.55 x its mean, p90 2.8 x); capped as the agent caps its outputs.
        size = min(int(mean * rng.lognormvariate(-0.5, 1.0)), 2 * OUTPUT_CAP)
        said = _action(rng, path, max(200, int(size * ASSISTANT_SHARE)))
        seen = _observation(rng, path, values, max(40, size - len(said)))
        messages = [*messages, {"role": "assistant", "content": said}, {"role": "user", "content": seen}]
