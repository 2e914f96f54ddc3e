"""HTML of the operator's view: server-rendered, no script, every value escaped.

Never shows a sensitive value: privacy findings are kinds and counts, and the task line is
shown with the trajectory's detected values replaced by their placeholders.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e3e6ea;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.edge{color:#116329}.cloud{color:#0b5cad}.none,.muted{color:#6b7280}.error{color:#b3261e}.refused{color:#9a6700}
tr.failover td{background:#fff8e1}
.bar{height:10px;border-radius:2px;display:inline-block;min-width:2px}
.bar.edge{background:#2da44e}.bar.cloud{background:#2f81f7}.bar.error{background:#cf222e}
.bar.refused{background:#d4a72c}
.totals span{margin-right:18px}a{color:#0b5cad}
form{max-width:360px;background:#fff;padding:16px;border:1px solid #e3e6ea}
input{width:100%;margin:6px 0 12px;padding:6px}
"""


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)} · Tandem</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>"
    )


def usd(value: Any) -> str:
    if value is None:
        return "–"
    amount = float(value)
    return f"−${-amount:.6f}" if amount < 0 else f"${amount:.6f}"


def seconds(value: Any) -> str:
    return f"{float(value or 0):.3f} s"


def when(stamp: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(stamp))) + " UTC" if stamp else "–"


def cell(text: Any, css: str = "") -> str:
    klass = f' class="{escape(css)}"' if css else ""
    return f"<td{klass}>{escape(str(text))}</td>"


def login_form(message: str = "") -> str:
    note = f'<p class="error">{escape(message)}</p>' if message else ""
    return page(
        "Sign in",
        "<h1>Tandem operator's view</h1><p class=muted>Sign in with an admin key.</p>"
        f'{note}<form method=post action="/ui/login"><label for=key>Admin key</label>'
        "<input id=key name=key type=password autocomplete=current-password required autofocus>"
        "<button type=submit>Sign in</button></form>",
    )


def trajectory_list(trajectories: Iterable[Mapping[str, Any]]) -> str:
    rows = []
    for t in trajectories:
        link = f'<a href="/ui/t/{escape(quote(t["id"], safe=""))}">{escape(t["id"])}</a>'
        outcome = t.get("outcome") or {}
        rows.append(
            "<tr>"
            f"<td>{link}</td>"
            + cell(t.get("route", ""))
            + cell(when(t.get("created_at")))
            + cell(t.get("steps", 0), "num")
            + cell(f"{float(t.get('cloud_share', 0)):.0%}", "num")
            + cell(usd(t.get("cost_usd")), "num")
            + cell(usd(t.get("counterfactual_usd")), "num")
            + cell(usd(t.get("savings_usd")), "num")
            + cell(_outcome_text(outcome, t.get("close_reason")))
            + cell(t.get("task_shown", ""), "muted")
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("trajectory", "route", "started", "steps", "cloud", "cost", "all-cloud", "saved", "outcome", "task")
    )
    table = f"<table id=trajectories><tr>{head}</tr>{''.join(rows)}</table>" if rows else "<p>No trajectories yet.</p>"
    return page("Trajectories", f"<h1>Recent trajectories</h1>{_signout()}{table}")


def _signout() -> str:
    style = "border:0;padding:0;background:none"
    return f'<form method=post action="/ui/logout" style="{style}"><button>Sign out</button></form>'


def _outcome_text(outcome: Mapping[str, Any], close_reason: Any) -> str:
    if outcome:
        parts = []
        if outcome.get("success") is not None:
            parts.append("success" if outcome["success"] else "failure")
        if outcome.get("score") is not None:
            parts.append(f"score {outcome['score']}")
        return ", ".join(parts)
    return f"closed ({close_reason})" if close_reason else "open"


def _privacy(record: Mapping[str, Any]) -> str:
    """Kinds of the values the cloud received in this step, and how many were redacted."""
    parts = []
    if record.get("exposed"):
        parts.append("exposed " + ", ".join(sorted(record["exposed"])))
    if record.get("redacted"):
        parts.append(f"redacted ×{int(record['redacted'])}")
    return "; ".join(parts) or "–"


def _inner(record: Mapping[str, Any]) -> str:
    calls = record.get("inner") or []
    return "; ".join(f"{c['purpose']} → {c['target']} {c['status']} {usd(c['cost_usd'])}" for c in calls) or "–"


def _failover(record: Mapping[str, Any]) -> str:
    """The step's failed upstream calls, each with its failure kind, and how the step ended:
    "cloud timeout → edge" for a step the edge answered after the cloud timed out."""
    failures = record.get("failures") or []
    if not failures:
        return "failover (kind not recorded)" if record.get("fallback") else "–"
    calls = [f"{f['target']} {f['kind']}" + (f" {f['http_status']}" if f.get("http_status") else "") for f in failures]
    answered = record.get("answered_by") or "none"
    end = answered if answered != "none" else f"no answer ({record.get('status')})"
    return " → ".join([*calls, end])


def _decision(record: Mapping[str, Any]) -> str:
    return f"{record['reason']} → {record.get('decided') or record['target']}"


def _family(family: Mapping[str, Any]) -> str:
    """A sub-agent's parent, and a run's sub-agents with their cost (router/api/trajectories.py)."""
    out = ""
    parent = family.get("parent")
    if parent:
        parent_id = str(parent["id"])
        out += (
            f'<p id=parent>Sub-agent of <a href="/ui/t/{quote(parent_id, safe="")}">{escape(parent_id)}</a>, '
            f"started by its step {escape(str(parent.get('step')))}</p>"
        )
    children = family.get("children") or []
    if children:
        rows = "".join(
            f'<tr class=child><td><a href="/ui/t/{quote(str(c["id"]), safe="")}">{escape(str(c["id"]))}</a></td>'
            + cell(c["parent_step"], "num")
            + cell(c["steps"], "num")
            + cell(usd(c["cost_usd"]), "num")
            + cell(c.get("children", 0), "num")
            + cell(usd(c["cost_with_children_usd"]), "num")
            + "</tr>"
            for c in children
        )
        head = "".join(
            f"<th>{h}</th>" for h in ("trajectory", "started by step", "steps", "cost", "its sub-agents", "with theirs")
        )
        out += (
            f"<h2>Sub-agents</h2><p>cost with sub-agents <b>{usd(family.get('cost_with_children_usd'))}</b></p>"
            f"<table id=children><tr>{head}</tr>{rows}</table>"
        )
    return out


def timeline(
    trajectory: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    privacy: Mapping[str, Any],
    family: Mapping[str, Any] | None = None,
) -> str:
    longest = max((float(r.get("latency_s") or 0) for r in records), default=0.0) or 1.0
    rows = []
    for r in records:
        # The target that answered (the ledger's and the metrics' definition), "none" for a
        # step refused, failed or cancelled; the decision's target beside its reason.
        answered = str(r.get("answered_by") or (r["target"] if r.get("status") == "ok" else "none"))
        calls = _failover(r)
        failed_over = bool(r.get("fallback"))  # the other target was called after a failure
        # A step the route's policy refused on purpose (a privacy block) is not shown as a failure.
        status = str(r.get("status"))
        css = answered if status == "ok" else ("refused" if status == "refused" else "error")
        width = max(int(200 * float(r.get("latency_s") or 0) / longest), 2)
        error = r.get("error") or ("" if r.get("status") == "ok" else f"HTTP {r.get('http_status')}")
        score = "–" if r.get("score") is None else f"{float(r['score']):.4g}"
        rows.append(
            f'<tr class="step{" failover" if failed_over else ""}" data-step="{int(r["step"])}" '
            f'data-target="{escape(answered)}" data-decided="{escape(str(r.get("decided") or r["target"]))}">'
            + cell(r["step"] if r.get("attempt", 1) == 1 else f"{r['step']} (attempt {r['attempt']})", "num")
            + cell(answered, answered)
            + cell(_decision(r))
            + cell(calls, "muted" if calls == "–" else "")
            + cell(score, "num")
            + cell(usd(r.get("cost_usd")), "num")
            + cell(usd(r.get("counterfactual_usd")), "num")
            + cell(usd(r.get("savings_usd")), "num")
            + f"<td class=num>{escape(seconds(r.get('latency_s')))} "
            + f'<span class="bar {css}" style="width:{width}px"></span></td>'
            + cell(_privacy(r))
            + cell(f"{status}{': ' + str(error)[:200] if error else ''}", css if error else "")
            + cell(_inner(r))
            + cell(", ".join(r.get("tools") or []) or "–")
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "step",
            "answered by",
            "decision",
            "failed calls",
            "score",
            "cost",
            "all-cloud",
            "saved",
            "latency",
            "privacy",
            "status",
            "inner calls",
            "tools",
        )
    )
    outcome = _outcome_text(trajectory.get("outcome") or {}, trajectory.get("close_reason"))
    seen = ", ".join(f"{k} ×{v}" for k, v in sorted((privacy.get("seen") or {}).items())) or "none"
    exposed = ", ".join(f"{k} ×{v}" for k, v in sorted((privacy.get("exposed") or {}).items())) or "none"
    edge, cloud = int(trajectory.get("edge_steps", 0)), int(trajectory.get("cloud_steps", 0))
    unanswered = max(int(trajectory.get("steps", 0)) - edge - cloud, 0)
    failed, refused = int(trajectory.get("errors", 0)), int(trajectory.get("refused", 0))
    totals = (
        "<p class=totals>"
        f"<span>route <b>{escape(str(trajectory.get('route', '')))}</b></span>"
        f"<span>steps <b>{int(trajectory.get('steps', 0))}</b></span>"
        f"<span>cloud share <b>{float(trajectory.get('cloud_share', 0)):.0%}</b></span>"
        f"<span>answered by <b>edge {edge} · cloud {cloud} · none {unanswered}</b></span>"
        f"<span>failed <b>{failed}</b> · refused <b>{refused}</b></span>"
        f"<span>cost <b>{usd(trajectory.get('cost_usd'))}</b></span>"
        f"<span>all-cloud <b>{usd(trajectory.get('counterfactual_usd'))}</b></span>"
        f"<span>saved <b>{usd(trajectory.get('savings_usd'))}</b></span>"
        f"<span>outcome <b>{escape(outcome)}</b></span>"
        "</p>"
        f"<p>Sensitive values seen: {escape(seen)}; reached the cloud: {escape(exposed)}; "
        f"privacy score {escape(str(privacy.get('score')))}</p>"
    )
    body = (
        f'<p><a href="/ui">← recent trajectories</a></p><h1>Trajectory {escape(str(trajectory["id"]))}</h1>'
        f"<p class=muted>{escape(str(trajectory.get('task_shown', '')))}</p>{totals}{_family(family or {})}"
        f"<h2>Steps</h2><table id=steps><tr>{head}</tr>{''.join(rows)}</table>"
    )
    return page(f"Trajectory {trajectory['id']}", body)
