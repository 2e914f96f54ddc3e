"""What `/readyz` asks of an upstream: does it answer HTTP at its base URL, and does it take the
gateway's key.

A redirect is never followed, by either client: the probe carries the gateway's key, and a base
URL that redirects elsewhere (another host, a login page) says nothing of whether the upstream
itself is there. An upstream that redirects is reported not reachable, with its status, so that
its base_url is mended instead of a healthy-looking pod routing steps into the redirect (steps
refuse redirects too: `Upstream._redirected`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from router.transport import Request, Transport, TransportError


@dataclass(slots=True)
class UpstreamState:
    """What `/readyz` reports of one upstream."""

    reachable: bool
    detail: str
    checked_at: float = field(default_factory=time.monotonic)
    status: int | None = None  # the HTTP status of the probe, when the upstream answered
    # The upstream is configured with a key (api_key_env, api_key_file) that is not there: not
    # authorised whatever the probe got (an upstream may answer /models without a key).
    key_missing: bool = False

    @property
    def authorised(self) -> bool | None:
        """Whether the upstream accepted the gateway's key: False on 401 or 403 or when its
        configured key is missing; unknown (None) when it did not answer, or answered with a
        redirect."""
        if self.key_missing:
            return False
        if self.status is None or not self.reachable:
            return None
        return self.status not in (401, 403)


async def probe(transport: Transport, base_url: str, headers: dict[str, str], timeout_s: float) -> UpstreamState:
    """GET `{base_url}/models` once: any status but a redirect, a 404 or 405 (no API there) or a
    web page counts as reachable (a 401 is alive, though not authorised)."""
    try:
        async with asyncio.timeout(timeout_s):
            response = await transport.send(Request("GET", f"{base_url}/models", headers))
            status = response.status
            response.release()
    except TimeoutError:
        return UpstreamState(False, f"no answer within {timeout_s:g} s")
    except TransportError as exc:
        return UpstreamState(False, f"{type(exc).__name__}: {exc}")
    if 300 <= status < 400:
        detail = f"HTTP {status}: the upstream redirects (not followed); set its base_url to the final address"
        return UpstreamState(False, detail, status=status)
    if status in (404, 405):
        # Something answers HTTP there, but no OpenAI-compatible API: a base_url without its
        # `/v1`, or another server on the port (a docs server, a web app). Every step sent
        # there would fail, so the upstream is not ready.
        detail = (
            f"HTTP {status} at {base_url}/models: no OpenAI-compatible API at this base_url "
            "(does it need its /v1? is another server on that port?)"
        )
        return UpstreamState(False, detail, status=status)
    kind = (response.headers.get("content-type") or "").lower()
    if 200 <= status < 300 and "html" in kind:
        page = kind.split(";")[0]
        detail = f"HTTP {status} with a web page ({page}) at {base_url}/models: not an OpenAI-compatible API"
        return UpstreamState(False, detail, status=status)
    return UpstreamState(True, f"HTTP {status}", status=status)
