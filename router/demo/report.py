"""The demo's printed output: a banner that says plainly what is simulated, a table per strategy,
and which task each strategy solved. Plain aligned text, no dependencies."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from router.demo.run import DemoResult, StrategyResult

MODELS = {"edge": "qwen3.5-9b", "cloud": "gpt-5.4"}


def banner(seed: int, tasks: int, prices: dict[str, dict[str, float]]) -> str:
    lines = [
        "Tandem demo -- the models are SIMULATED",
        "",
        "  No model runs here. A scripted edge server and a scripted cloud server (OpenAI-compatible,",
        "  on 127.0.0.1) answer the way an agent's model does: tool calls, reading tool results, edits,",
        "  a final answer, with realistic token counts and latencies. The cloud is simulated as the",
        "  stronger model: the edge is scripted to fail edits and error recovery more often than reads,",
        f"  with a fixed seed ({seed}), so the strategies solve different tasks. The gateway, its routing,",
        "  its streaming relay and its ledger are the real ones; every number below is from its ledger.",
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
    return [
        result.strategy.label,
        f"{result.solved}/{len(result.tasks)}",
        str(result.steps),
        _percent(result.cloud_steps, result.steps),
        f"{result.tokens('prompt_tokens'):,}",
        f"{result.tokens('cached_tokens'):,}",
        f"{result.tokens('completion_tokens'):,}",
        f"{result.cost_usd:.4f}",
        f"{result.counterfactual_usd:.4f}",
        _percent(result.counterfactual_usd - result.cost_usd, result.counterfactual_usd),
        f"{result.wall_s:.1f}",
    ]


STRATEGY_HEADER = [
    "strategy",
    "solved",
    "steps",
    "cloud share",
    "prompt tok",
    "cached tok",
    "completion tok",
    "cost $",
    "all-cloud $",
    "saved",
    "wall s",
]


def _task_cell(solved: bool, steps: int, cloud_steps: int) -> str:
    return f"{'solved' if solved else 'FAILED'} {steps:>2} steps, {cloud_steps:>2} on cloud"


def render(result: DemoResult) -> str:
    strategies = result.strategies
    lines = ["Per strategy (all numbers from the gateway's ledger, GET /v1/trajectories/{id}):", ""]
    lines.append(table(STRATEGY_HEADER, [_strategy_row(s) for s in strategies]))
    lines += [
        "",
        "  all-cloud $: the same steps' tokens priced as if the cloud had answered them;",
        "  saved: 1 - cost / all-cloud.",
    ]
    reference = next((s for s in strategies if s.strategy.key == "cloud-only"), None)
    if reference is not None and reference.cost_usd:
        for other in strategies:
            if other is not reference:
                lines.append(
                    f"  {other.strategy.label}: {other.solved}/{len(other.tasks)} solved at "
                    f"{_percent(other.cost_usd, reference.cost_usd)} of the cloud-only run's cost "
                    f"(cloud-only: {reference.solved}/{len(reference.tasks)})."
                )
    lines += ["", "Per task (each run's outcome also posted to the gateway, POST /v1/trajectories/{id}/outcome):", ""]
    rows = []
    for index, task in enumerate(strategies[0].tasks):
        cells = [task.task_id]
        for strategy in strategies:
            run = strategy.tasks[index]
            cells.append(_task_cell(run.solved, run.steps, run.cloud_steps))
        rows.append(cells)
    lines.append(table(["task", *(s.strategy.label for s in strategies)], rows, left=len(strategies) + 1))
    lines += [
        "",
        "  privacy exposure: not measured yet (the gateway's privacy stage is still to come).",
        f"  models SIMULATED; seed {result.seed}; total wall time {result.wall_s:.1f} s.",
    ]
    return "\n".join(lines)
