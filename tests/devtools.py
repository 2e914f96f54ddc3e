"""A headless chromium driven through its DevTools protocol (websockets), for tests that need
to interact with a page: type into a form, submit it, read what the page and its cookies hold."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

_LISTENING = re.compile(r"DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)")


class Browser:
    def __init__(self, chromium: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="tandem-devtools-")
        self._process = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = self._port()
        deadline = time.monotonic() + 20
        page_url = None
        while page_url is None:
            pages = [p for p in httpx.get(f"http://127.0.0.1:{port}/json/list").json() if p["type"] == "page"]
            page_url = pages[0]["webSocketDebuggerUrl"] if pages else None
            if page_url is None and time.monotonic() > deadline:
                raise RuntimeError("chromium opened no page")
        self._stack = ExitStack()
        self._socket: ClientConnection = self._stack.enter_context(connect(page_url, max_size=None))
        self._ids = itertools.count(1)

    def _port(self) -> int:
        assert self._process.stderr is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if match := _LISTENING.search(line):
                return int(match.group(2))
            if not line and self._process.poll() is not None:
                break
        raise RuntimeError("chromium did not open its DevTools port")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One protocol command; its result (events that arrive meanwhile are skipped)."""
        ident = next(self._ids)
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return reply["result"].get("value")

    def act(self, expression: str) -> None:
        """Run a page action that navigates (a submit, a click on a form's button): the page may
        be replaced before the evaluation answers, which is what the action is for."""
        try:
            self.evaluate(expression)
        except RuntimeError as error:
            if not _navigating(error):
                raise

    def wait_for(self, expression: str, timeout: float = 15) -> Any:
        """Poll a page expression until it is truthy on a page that has finished loading (a page
        still parsing has only the rows that arrived so far)."""
        deadline = time.monotonic() + timeout
        loaded = f"document.readyState === 'complete' && ({expression})"
        while True:
            try:
                value = self.evaluate(loaded)
            except RuntimeError as error:
                # A form submit or redirect replaces the page's context while we poll: that is
                # "not there yet", not a failure of what the test checks.
                if not _navigating(error):
                    raise
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression!r} stayed falsy")
            time.sleep(0.1)

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def close(self) -> None:
        self._stack.close()
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        shutil.rmtree(self._profile, ignore_errors=True)


def _navigating(error: RuntimeError) -> bool:
    """The page's context went away under an evaluation (the page is navigating)."""
    return any(words in str(error) for words in ("navigated or closed", "context was destroyed", "Cannot find context"))
