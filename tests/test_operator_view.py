"""The operator's view in a real headless browser (Debian's chromium): the pages load, a
trajectory's timeline matches its ledger, nothing sensitive appears, everything is escaped.

    python -m tests.test_operator_view docs/operator-view.png   # the screenshot in docs/operations/operator-view.md
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest

from router.api.view_html import usd
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for, wait_until

ADMIN_KEY = "admin-key-for-the-view"
EMAIL = "alice@example.com"
HOSTILE = "<script>document.title='owned'</script><b>bold</b>"
ROUTES = {"asked": {"strategy": "llm_judge", "judge": "cloud", "failover": False}}


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is not installed: `make test` installs it (apt-get install chromium)")
    return path


def browse(url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """One headless chromium run on `url` (a fresh profile each time)."""
    with tempfile.TemporaryDirectory(prefix="tandem-chromium-") as profile:
        return subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",  # tests run as root in CI containers
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                *extra,
                url,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )


def dom(url: str) -> str:
    done = browse(url, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def drive(client: httpx.Client, server: GatewayServer, cloud: FakeUpstream) -> str:
    """One run: an edge step, a cloud step with an e-mail address (exposed), a failed cloud step."""
    session = "view-run"

    def step(text: str) -> httpx.Response:
        body = {"model": "asked", "messages": [{"role": "user", "content": text}]}
        return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})

    cloud.push({"kind": "text", "text": "no"})
    assert step(f"{HOSTILE} fix the test and mail {EMAIL}").status_code == 200
    cloud.push({"kind": "text", "text": "yes"}, {"kind": "text"})
    assert step(f"mail the report to {EMAIL}").status_code == 200
    cloud.push({"kind": "text", "text": "yes"}, {"kind": "error", "status": 500})
    assert step("once more").status_code == 500
    return session


class Rows(HTMLParser):
    """The timeline's step rows: each row's cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_row = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr" and "step" in (dict(attrs).get("class") or "").split():
            self._in_row = True
            self.rows.append([])
        elif tag == "td" and self._in_row:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr":
            self._in_row = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture()
def view(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, ui={"enabled": True}, admin_api_keys=[ADMIN_KEY])


def signed(server: GatewayServer, path: str) -> str:
    return f"http://operator:{ADMIN_KEY}@127.0.0.1:{server.port}{path}"


def test_off_by_default_and_refused_without_an_admin_key(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client
) -> None:
    off = make_gateway(routes=ROUTES)
    reply = client.get(f"{off.url}/ui")
    assert reply.status_code == 404 and "ui.enabled" in reply.json()["error"]["message"]
    keyless = make_gateway(routes=ROUTES, ui={"enabled": True})
    reply = client.get(f"{keyless.url}/ui", auth=("operator", "anything"))
    assert reply.status_code == 403 and "admin_api_keys" in reply.json()["error"]["message"]


def test_sign_in_by_basic_auth_or_the_login_form(view: GatewayServer, client: httpx.Client) -> None:
    anonymous = client.get(f"{view.url}/ui")
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Basic ")
    assert 'action="/ui/login"' in anonymous.text
    assert client.get(f"{view.url}/ui", auth=("operator", "wrong")).status_code == 401
    assert client.get(f"{view.url}/ui", auth=("operator", ADMIN_KEY)).status_code == 200
    wrong = client.post(f"{view.url}/ui/login", data={"key": "wrong"})
    assert wrong.status_code == 401 and "not an admin key" in wrong.text
    login = client.post(f"{view.url}/ui/login", data={"key": ADMIN_KEY})
    assert login.status_code == 303 and login.headers["location"] == "/ui"
    cookie = login.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert ADMIN_KEY not in cookie
    token = cookie.split(";")[0].split("=", 1)[1]
    with httpx.Client(cookies={"tandem_ui": token}) as browser:
        assert browser.get(f"{view.url}/ui").status_code == 200
    forged = token.rsplit(".", 1)[0] + "." + "0" * 64
    with httpx.Client(cookies={"tandem_ui": forged}) as browser:
        assert browser.get(f"{view.url}/ui").status_code == 401
    logout = client.post(f"{view.url}/ui/logout")
    assert logout.status_code == 303 and "tandem_ui=" in logout.headers["set-cookie"]


def test_pages_in_a_real_browser_match_the_ledger_and_show_no_sensitive_value(
    view: GatewayServer, client: httpx.Client, cloud: FakeUpstream
) -> None:
    session = drive(client, view, cloud)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    closed = client.post(f"{view.url}/v1/trajectories/{session}/outcome", json={"success": True}, headers=admin)
    assert closed.status_code == 200, closed.text
    ledger = client.get(f"{view.url}/v1/trajectories/{session}", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    records = ledger.json()["records"]
    listing = dom(signed(view, "/ui"))
    assert "Recent trajectories" in listing and f'href="/ui/t/{session}"' in listing
    page = dom(signed(view, f"/ui/t/{session}"))
    parser = Rows()
    parser.feed(page)
    assert len(parser.rows) == len(records) == 3
    for row, record in zip(parser.rows, records, strict=True):
        step, target, decision, _failed, _score, cost, all_cloud, saved, _latency, privacy, status, inner, _tools = row
        assert (int(step), target) == (record["step"], record["answered_by"])
        assert decision == f"{record['reason']} → {record['decided']}"
        assert (cost, all_cloud, saved) == (
            usd(record["cost_usd"]),
            usd(record["counterfactual_usd"]),
            usd(record["savings_usd"]),
        )
        assert status.startswith(record["status"])
        assert inner.startswith("judge → cloud ok")
        assert ("EMAIL" in privacy) == bool(record["exposed"])
    assert [r["status"] for r in records] == ["ok", "ok", "error"]
    assert parser.rows[2][10].startswith("error: ") and parser.rows[2][1] == "none"  # failed: no target answered
    assert [row[3] for row in parser.rows] == ["–", "–", "cloud status 500 → no answer (error)"]
    # Kinds and counts, never values; the task is shown with placeholders; the key never shows.
    for text in (listing, page):
        assert EMAIL not in text and ADMIN_KEY not in text
    assert "and mail [EMAIL]" in page  # the task line, its e-mail address as a typed placeholder
    # Escaped: the agent's markup is text, not elements, and ran no script.
    assert "<script" not in page.split("</style>", 1)[1] and "&lt;script&gt;" in listing
    assert "<title>Trajectory view-run · Tandem</title>" in page
    assert "outcome <b>success</b>" in page and "success" in listing


def test_a_screenshot_of_the_timeline(view: GatewayServer, client: httpx.Client, cloud: FakeUpstream) -> None:
    session = drive(client, view, cloud)
    with tempfile.TemporaryDirectory() as folder:
        shot = Path(folder) / "timeline.png"
        done = browse(signed(view, f"/ui/t/{session}"), f"--screenshot={shot}", "--window-size=1500,420")
        assert done.returncode == 0, done.stderr[-2000:]
        data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def write_screenshot(target: Path) -> None:
    """The docs' screenshot: a run of every kind of step, in the browser."""
    edge = FakeUpstream(name="edge", model="edge-model").start()
    cloud = FakeUpstream(name="cloud", model="cloud-model").start()
    settings = settings_for(
        edge.base_url, cloud.base_url, routes=ROUTES, ui={"enabled": True}, admin_api_keys=[ADMIN_KEY]
    )
    server = GatewayServer(settings).start()
    try:
        with httpx.Client(timeout=20) as client:
            session = drive(client, server, cloud)
        done = browse(signed(server, f"/ui/t/{session}"), f"--screenshot={target.resolve()}", "--window-size=1500,420")
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        server.stop()
        edge.stop()
        cloud.stop()


if __name__ == "__main__":
    write_screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/operator-view.png"))


def test_the_login_form_in_a_real_browser_sets_an_httponly_cookie(
    view: GatewayServer, client: httpx.Client, cloud: FakeUpstream
) -> None:
    from tests.devtools import Browser

    session = drive(client, view, cloud)
    browser = Browser(chromium())
    try:
        browser.send("Network.enable")
        browser.open(f"{view.url}/ui/login")
        browser.wait_for("document.getElementById('key') !== null")
        browser.act(f"document.getElementById('key').value = {ADMIN_KEY!r}; document.forms[0].submit()")
        browser.wait_for("document.getElementById('trajectories') !== null")
        assert browser.evaluate("location.pathname") == "/ui"
        assert browser.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
        cookies = browser.send("Network.getCookies")["cookies"]
        (cookie,) = [c for c in cookies if c["name"] == "tandem_ui"]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and ADMIN_KEY not in cookie["value"]
        browser.open(f"{view.url}/ui/t/{session}")
        assert browser.wait_for("document.querySelectorAll('tr.step').length") == 3
        assert browser.evaluate("document.title") == f"Trajectory {session} · Tandem"  # no script ran
        assert EMAIL not in browser.evaluate("document.documentElement.outerHTML")
    finally:
        browser.close()


FAILOVER_ROUTES = {
    "drawn": {"strategy": "random", "p": 0.0, "failover": True},
    "guarded": {"strategy": "cloud", "privacy": "block", "failover": True},
}


def test_a_failover_step_is_marked_in_a_real_browser_and_the_share_counts_answers(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """The draw chose the edge, the edge failed, the cloud answered: the row says so (answered
    by cloud, decision random_draw → edge, the edge's failure kind), and the share counts the
    step as cloud; a step that failed on both targets counts as neither. On a route that sends
    every step to the cloud, a step the edge answered after the cloud failed counts as edge,
    and a step the privacy policy blocked as neither: a cloud share of 0%."""
    from tests.devtools import Browser

    server = make_gateway(routes=FAILOVER_ROUTES, ui={"enabled": True}, admin_api_keys=[ADMIN_KEY])
    messages: list[dict[str, str]] = []

    def step(text: str) -> httpx.Response:
        messages.append({"role": "user", "content": text})
        body = {"model": "drawn", "messages": messages}
        return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "drawn-run"})

    edge.push({"kind": "error", "status": 503})
    assert step("fix the build").headers["x-tandem-fallback"] == "true"
    assert step("now the docs").headers["x-tandem-target"] == "edge"
    edge.push({"kind": "error", "status": 500})
    cloud.push({"kind": "error", "status": 500})
    assert step("and the tests").status_code == 500
    guarded: list[dict[str, str]] = []
    for text, status in (("tidy the logs", 200), ("mail them to alice@example.com", 403)):
        guarded.append({"role": "user", "content": text})
        body = {"model": "guarded", "messages": guarded}
        if status == 200:  # the cloud fails, the edge answers; the blocked step reaches neither
            cloud.push({"kind": "error", "status": 503})
        sent = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "guarded-run"})
        assert sent.status_code == status, sent.text
    browser = Browser(chromium())
    try:
        browser.open(signed(server, "/ui/t/drawn-run"))
        assert browser.wait_for("document.querySelectorAll('tr.step').length") == 3
        marked = browser.evaluate(
            "[...document.querySelectorAll('tr.step.failover')].map(r => [r.dataset.step, r.dataset.target,"
            " r.dataset.decided, [...r.cells].map(c => c.textContent)])"
        )
        (failed_over, failed) = marked
        step_no, target, decided, cells = failed_over
        assert (step_no, target, decided) == ("1", "cloud", "edge")
        assert cells[1:4] == ["cloud", "random_draw → edge", "edge status 503 → cloud"]
        assert failed[:3] == ["3", "none", "edge"]
        assert failed[3][3] == "edge status 500 → cloud status 500 → no answer (error)"
        totals = browser.evaluate("document.querySelector('p.totals').textContent")
        assert "cloud share 50%" in totals and "edge 1 · cloud 1 · none 1" in totals
        plain = browser.evaluate("document.querySelector('tr.step[data-step=\"2\"]').className")
        assert plain == "step"
        browser.open(signed(server, "/ui/t/guarded-run"))
        browser.wait_for("document.title.startsWith('Trajectory guarded-run')")
        rows = browser.evaluate(
            "[...document.querySelectorAll('tr.step')].map(r => [r.className, [...r.cells].map(c => c.textContent)])"
        )
        assert [(css, cells[1], cells[2], cells[3]) for css, cells in rows] == [
            ("step failover", "edge", "route_fixed → cloud", "cloud status 503 → edge"),
            ("step", "none", "route_fixed → cloud", "–"),
        ]
        totals = browser.evaluate("document.querySelector('p.totals').textContent")
        assert "cloud share 0%" in totals and "edge 1 · cloud 0 · none 1" in totals
        # The block is a refusal on purpose, shown as one, not as a failure (the failed run
        # above has its error).
        assert "failed 0 · refused 1" in totals
        status = browser.evaluate(
            "[...document.querySelectorAll('tr.step[data-step=\"2\"] td')].map(c => [c.className, c.textContent])"
        )[10]
        assert status[0] == "refused" and status[1].startswith("refused: the privacy policy"), status
        browser.open(signed(server, "/ui/t/drawn-run"))
        browser.wait_for("document.title.startsWith('Trajectory drawn-run')")
        totals = browser.evaluate("document.querySelector('p.totals').textContent")
        assert "failed 1 · refused 0" in totals
    finally:
        browser.close()


def test_a_runs_sub_agents_are_linked_both_ways_in_a_real_browser(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    """A Claude Code-like session whose answer starts a sub-agent (the Task tool): the parent's
    page lists the sub-agent with a link and its cost, and the cost with sub-agents; the
    sub-agent's page links back to its parent and the step that started it."""
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, ui={"enabled": True}, admin_api_keys=[ADMIN_KEY])
    prompt = "Find where the config file is loaded."
    task = orjson.dumps({"description": "find", "prompt": prompt, "subagent_type": "general-purpose"}).decode()
    edge.push({"kind": "tool_call", "call_id": "toolu_31", "name": "Task", "arguments": task}, {"kind": "text"})
    headers = {"X-Claude-Code-Session-Id": "view-parent", "anthropic-version": "2023-06-01"}
    for system, text in (("You are Claude Code.", "refactor"), ("You are a search agent.", prompt)):
        body = {"model": "tandem", "max_tokens": 64, "system": system, "messages": [{"role": "user", "content": text}]}
        response = client.post(f"{server.url}/v1/messages", json=body, headers=headers)
        assert response.status_code == 200
    child = response.headers["x-tandem-trajectory"]
    assert child.startswith("view-parent~")

    def parent_detail() -> dict[str, Any]:
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        found: dict[str, Any] = client.get(f"{server.url}/v1/trajectories/view-parent", headers=admin).json()
        return found

    assert wait_until(lambda: bool(parent_detail().get("children")))
    detail = parent_detail()
    parent_page = dom(signed(server, "/ui/t/view-parent"))
    assert f'<a href="/ui/t/{quote(child, safe="")}">{child}</a>' in parent_page
    assert f"cost with sub-agents <b>{usd(detail['cost_with_children_usd'])}</b>" in parent_page
    assert usd(detail["children"][0]["cost_usd"]) in parent_page.split('id="children"')[1]
    child_page = dom(signed(server, f"/ui/t/{quote(child, safe='')}"))
    assert 'Sub-agent of <a href="/ui/t/view-parent">view-parent</a>, started by its step 1' in child_page
