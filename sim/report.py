"""The demo's printed output: a banner that says plainly what is simulated, a table per strategy,
and which task each strategy solved. Plain aligned text, no dependencies."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.run import DemoResult, StrategyResult

MODELS = {"edge": "qwen3.5-9b", "cloud": "gpt-5.4"}


def banner(seed: int, tasks: int, prices: dict[str, dict[str, float]]) -> str:
    lines = [
        "Tandem demo -- the models are SIMULATED",
        "",
        "  No model runs here. A scripted edge server and a scripted cloud server (OpenAI-compatible,",
        "  on 127.0.0.1) answer the way an agent's model does: tool calls, reading tool results, edits,",
        "  a final answer, with realistic token counts and latencies. The cloud is simulated as the",
        "  stronger model: the edge is scripted to fail edits and error recovery more often than reads,",
        f"  with a fixed seed ({seed}), so the strategies solve different tasks. The strategies' inner calls",
        "  (entropy probe, judge, verifier, advisor, planner) get simulated answers too: noisy signals of",
        "  the same draw, never the draw itself. The gateway, its routing, inner calls, streaming relay",
        "  and ledger are the real ones; every number below is from its ledger.",
        "",
        "  prices, USD per 1M tokens: input / cached input / output",
    ]
    for role in ("edge", "cloud"):
        p = prices[role]
        rates = f"{p['input']:5.2f} / {p['cached_input']:4.2f} / {p['output']:5.2f}"
        lines.append(f"    {role:<6} {MODELS[role]:<11} {rates}")
    lines += ["", f"  {tasks} tasks under each strategy, the strategies side by side; please wait ...", ""]
    return "\n".join(lines)


def table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Columns padded to their widest cell; the first `left` columns left-aligned, the rest right."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _strategy_row(result: StrategyResult) -> list[str]:
    steps = result.steps
    return [
        result.strategy.label,
        f"{result.solved}/{len(result.tasks)}",
        str(steps),
        _percent(result.cloud_steps, steps),
        str(result.cloud_calls),
        f"{len(result.inner_calls) / steps:.2f}" if steps else "-",
        f"{result.tokens('prompt_tokens'):,}",
        f"{result.tokens('cached_tokens'):,}",
        f"{result.tokens('completion_tokens'):,}",
        f"{result.inner_tokens:,}",
        f"{result.cost_usd:.4f}",
        f"{result.counterfactual_usd:.4f}",
        _percent(result.counterfactual_usd - result.cost_usd, result.counterfactual_usd),
        "-" if result.privacy_score is None else f"{result.privacy_score:.2f}",
        f"{result.wall_s:.1f}",
    ]


STRATEGY_HEADER = [
    "strategy",
    "solved",
    "steps",
    "cloud share",
    "cloud calls",
    "extra calls/step",
    "prompt tok",
    "cached tok",
    "output tok",
    "inner tok",
    "cost $",
    "all-cloud $",
    "saved",
    "privacy",
    "wall s",
]

NOTES = """  cloud share: steps the cloud answered. cloud calls: every call that reached the cloud, inner
  ones (advice, plans) included. extra calls/step: the strategy's inner calls (probe, judge,
  draft, verify, advisor, plan) per step, from each step's `inner` list; their tokens are under
  inner tok (prompt + output) and their dollars in cost $. prompt/cached/output tok: the calls
  that answered the steps. all-cloud $: the same row's calls' tokens priced as if the cloud had
  answered them; saved: 1 - cost $ / all-cloud $, against the row's own all-cloud cost (not the
  cloud-only row's). privacy: EC2-Bench's score from the gateway, the mean over the runs (1 =
  nothing sensitive reached the cloud); the demo's files hold no value the gateway's scan counts
  (secrets, e-mail and IP addresses, phone numbers, ids; bump-timeout's `0.0.0.0` is none), so
  every row reads 1.00."""


def _inner_mix(result: StrategyResult) -> str:
    """The strategy's inner calls per step, by purpose and target: `probe 1.00 edge`."""
    counts: dict[str, int] = {}
    for call in result.inner_calls:
        key = f"{call['purpose']} ({call['target']})"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{key} {count / result.steps:.2f}" for key, count in sorted(counts.items()))


def _task_cell(solved: bool, steps: int, cloud_steps: int) -> str:
    return f"{'ok' if solved else 'FAIL'} {steps}/{cloud_steps}"


def render(result: DemoResult) -> str:
    strategies = result.strategies
    lines = ["Per strategy (all numbers from the gateway's ledger, GET /v1/trajectories/{id}):", ""]
    lines.append(table(STRATEGY_HEADER, [_strategy_row(s) for s in strategies]))
    lines += ["", NOTES, "", "Inner calls per step, by purpose (target):", ""]
    mixes = [[s.strategy.label, _inner_mix(s)] for s in strategies if s.inner_calls]
    lines.append(table(["strategy", "inner calls per step"], mixes, left=2))
    lines += [
        "",
        "Per task: ok/FAIL steps/cloud steps (each run's outcome is also posted to the gateway,",
        "POST /v1/trajectories/{id}/outcome):",
        "",
    ]
    rows = [[s.strategy.label, *(_task_cell(t.solved, t.steps, t.cloud_steps) for t in s.tasks)] for s in strategies]
    lines.append(table(["strategy", *(t.task_id for t in strategies[0].tasks)], rows))
    lines += [
        "",
        f"  models SIMULATED; seed {result.seed}; total wall time {result.wall_s:.1f} s.",
    ]
    return "\n".join(lines)
