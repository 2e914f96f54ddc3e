"""Medians over runs, added figures, the targets, and the table printed at the end."""

from __future__ import annotations

import math
from typing import Any

import orjson

from benchmarks.overhead.scenarios import SCENARIOS, median

GATEWAYS = ("tandem", "litellm")
COLUMNS = ("direct", "tandem", "litellm")
# Figures whose difference from the direct path is the gateway's overhead.
ADDED = ("p50_ms", "p99_ms", "ttft_p50_ms", "ttft_p99_ms")
# Targets from the issue, for this 2-core machine; the method is fixed, the limits too.
LIMITS = {
    "added_p50_ms": 1.0,
    "added_p99_ms": 5.0,
    "added_ttft_p50_ms": 2.0,
    "rps_vs_litellm": 3.0,
    "peak_rss_mb": 150.0,
}


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else math.nan


def build(meta: dict[str, Any], runs: list[dict[str, Any]], profiles: dict[str, list[str]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for scenario in SCENARIOS:
        rows = [run["scenarios"][scenario.key] for run in runs if scenario.key in run["scenarios"]]
        if not rows:
            continue
        entry: dict[str, Any] = {}
        for target in COLUMNS:
            present = [row[target] for row in rows if target in row]
            if not present:
                continue
            metrics = {k for figures in present for k, v in figures.items() if isinstance(v, (int, float))}
            entry[target] = {k: median([_num(f.get(k)) for f in present]) for k in sorted(metrics)}
            entry[target]["errors"] = sum(int(f.get("errors") or 0) for f in present)
            failures = [f["first_error"] for f in present if f.get("first_error")]
            if failures:
                entry[target]["first_error"] = failures[0]
        for gateway in GATEWAYS:
            # Added per run (same load, same run), then the median over runs.
            added = {}
            for key in ADDED:
                values = [
                    _num(row[gateway].get(key)) - _num(row["direct"].get(key))
                    for row in rows
                    if gateway in row and "direct" in row
                ]
                if values and not all(math.isnan(v) for v in values):
                    added[key] = median(values)
            if added:
                entry.setdefault("added", {})[gateway] = added
        ratios = [
            _num(row["tandem"]["rps"]) / _num(row["litellm"]["rps"])
            for row in rows
            if "tandem" in row and "litellm" in row and _num(row["litellm"]["rps"]) > 0
        ]
        if ratios:
            entry["rps_tandem_over_litellm"] = median(ratios)
        summary[scenario.key] = entry
    rss: dict[str, float] = {}
    memory: dict[str, dict[str, float]] = {}
    for gateway in GATEWAYS:
        measured = [run for run in runs if gateway in run["rss_mb"]]
        if not measured:
            continue
        # The worst run: a limit on memory is a limit on the peak.
        rss[gateway] = max(run["rss_mb"][gateway] for run in measured)
        # Memory that grows with the requests served, rather than with the load's concurrency,
        # is state kept per request; its slope says where the peak goes on a longer run.
        growth = [
            1024 * (run["rss_mb"][gateway] - run["rss_at_start_mb"][gateway]) / run["answered"][gateway]
            for run in measured
            if run["answered"].get(gateway)
        ]
        memory[gateway] = {
            "at_start_mb": median([run["rss_at_start_mb"][gateway] for run in measured]),
            "requests_per_run": median([float(run["answered"].get(gateway, 0)) for run in measured]),
            "kb_per_request": median(growth),
        }
    results = {
        "meta": meta,
        "summary": summary,
        "peak_rss_mb": rss,
        "memory": memory,
        "runs": runs,
        "profiles": profiles,
    }
    results["targets"] = _targets(results)
    return results


def _check(name: str, figure: float | None, limit: float, unit: str, at_most: bool) -> dict[str, Any]:
    if figure is None or math.isnan(figure):
        return {"target": name, "figure": None, "limit": limit, "unit": unit, "status": "not measured"}
    passed = figure <= limit if at_most else figure >= limit
    return {
        "target": name,
        "figure": figure,
        "limit": limit,
        "unit": unit,
        "status": "PASS" if passed else "FAIL",
    }


def _targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    summary = results["summary"]

    def added(scenario: str, key: str) -> float | None:
        value = summary.get(scenario, {}).get("added", {}).get("tandem", {}).get(key)
        return None if value is None else float(value)

    checks = [
        _check("added latency p50, non-streamed c=64, 100 ms upstream", added("plain_c64", "p50_ms"),
               LIMITS["added_p50_ms"], "ms", at_most=True),
        _check("added latency p99, non-streamed c=64, 100 ms upstream", added("plain_c64", "p99_ms"),
               LIMITS["added_p99_ms"], "ms", at_most=True),
        _check("added time to first token p50, streamed c=64", added("stream_c64", "ttft_p50_ms"),
               LIMITS["added_ttft_p50_ms"], "ms", at_most=True),
        _check("saturation requests/s, Tandem over LiteLLM", summary.get("saturation", {}).get(
            "rps_tandem_over_litellm"), LIMITS["rps_vs_litellm"], "x", at_most=False),
        _check("peak RSS of the gateway (worst run)", results["peak_rss_mb"].get("tandem"),
               LIMITS["peak_rss_mb"], "MB", at_most=True),
    ]  # fmt: skip
    errors = sum(entry.get("tandem", {}).get("errors", 0) for entry in summary.values())
    checks.append(
        {"target": "failed requests through Tandem", "figure": errors, "limit": 0, "unit": "",
         "status": "PASS" if errors == 0 else "FAIL"}
    )  # fmt: skip
    return checks


def _fmt(value: Any, unit: str = "ms") -> str:
    value = _num(value)
    if math.isnan(value):
        return "-"
    if unit == "rps":
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def progress(figures: dict[str, Any], streamed: bool) -> str:
    """One line per load while the benchmark runs."""
    text = f" {_fmt(figures['rps'], 'rps'):>7} req/s  p50 {_fmt(figures['p50_ms'])} ms"
    text += f"  p99 {_fmt(figures['p99_ms'])} ms"
    if streamed:
        text += f"  TTFT p50 {_fmt(figures.get('ttft_p50_ms'))} ms"
    if figures.get("errors"):
        text += f"  ERRORS {figures['errors']}: {figures.get('first_error')}"
    return text


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    summary = results["summary"]
    pinning = (
        f"gateways on CPU {meta['gateway_cpu']}, load generator and fake upstreams on CPU {meta['load_cpu']}"
        if meta["gateway_cpu"] is not None
        else "UNPINNED"
    )
    quick = " (QUICK: a smoke check, not figures)" if meta["quick"] else ""
    lines = [
        "",
        f"Gateway overhead: medians of {meta['runs']} run(s){quick}",
        f"{meta['machine']}; Python {meta['python']}; {pinning}",
        f"LiteLLM ({meta['litellm']['spec']}): {meta['litellm']['status']}",
        "",
        f"{'scenario / figure':<44}{'direct':>9}{'tandem':>9}{'litellm':>9}{'+tandem':>9}{'+litellm':>9}",
    ]  # fmt: skip

    def row(label: str, key: str, entry: dict[str, Any], unit: str = "ms", added: bool = True) -> None:
        cells = [_fmt(entry.get(target, {}).get(key), unit) for target in COLUMNS]
        extra = [_fmt(entry.get("added", {}).get(g, {}).get(key)) if added else "" for g in GATEWAYS]
        lines.append(f"  {label:<42}" + "".join(f"{c:>9}" for c in cells + extra))

    for scenario in SCENARIOS:
        entry = summary.get(scenario.key)
        if entry is None:
            continue
        lines.append(scenario.title)
        if scenario.streamed:
            row("time to first token p50, ms", "ttft_p50_ms", entry)
            row("time to first token p99, ms", "ttft_p99_ms", entry)
            row("whole stream p50, ms", "p50_ms", entry)
        else:
            row("latency p50, ms", "p50_ms", entry)
            row("latency p99, ms", "p99_ms", entry)
        row("requests/s", "rps", entry, unit="rps", added=False)
        ratio = entry.get("rps_tandem_over_litellm")
        if scenario.key == "saturation" and ratio is not None:
            lines.append(f"  {'requests/s, Tandem over LiteLLM':<42}{'':>18}{ratio:>8.2f}x")
        failed = {t: entry[t]["errors"] for t in COLUMNS if entry.get(t, {}).get("errors")}
        if failed:
            lines.append(f"  FAILED REQUESTS: {failed}; first: {entry[next(iter(failed))].get('first_error')}")
    rss = results["peak_rss_mb"]
    memory = results["memory"]
    lines.append("memory of the gateway process")
    for label, values in (
        ("peak RSS, MB (worst run)", {g: rss.get(g) for g in GATEWAYS}),
        ("RSS when ready, MB", {g: memory.get(g, {}).get("at_start_mb") for g in GATEWAYS}),
        ("requests served in a run", {g: memory.get(g, {}).get("requests_per_run") for g in GATEWAYS}),
        ("growth, KB per request served", {g: memory.get(g, {}).get("kb_per_request") for g in GATEWAYS}),
    ):
        unit = "ms" if label.startswith("growth") else "rps"
        cells = "".join(f"{_fmt(values[g], unit):>9}" for g in GATEWAYS)
        lines.append(f"  {label:<42}{'':>9}{cells}")
    lines += ["", "Targets (Tandem):"]
    for check in results["targets"]:
        figure = "-" if check["figure"] is None else f"{check['figure']:.2f}{check['unit']}"
        sign = ">=" if check["unit"] == "x" else "<="
        lines.append(f"  [{check['status']}] {check['target']}: {figure} ({sign} {check['limit']:g}{check['unit']})")
    for scenario, summary_lines in results["profiles"].items():
        lines += ["", f"py-spy profile of Tandem, {scenario}:", *(f"  {line}" for line in summary_lines)]
    return "\n".join(lines)


def to_json(results: dict[str, Any]) -> str:
    return orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode()
