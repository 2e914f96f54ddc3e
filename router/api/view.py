"""The operator's view: read-only pages served by the gateway (`ui.enabled`), listing recent
trajectories and, for one, its steps as a timeline. Grafana shows the fleet; this shows why
one run went where it went.

Off by default and refused while no admin key is configured. A browser signs in with an admin
key: HTTP Basic auth (any user name, the key as password), or the login form, which sets an
HttpOnly, SameSite=Strict cookie naming a server-side session (router/api/ui_sessions.py), signed
with the key (never the key itself); Secure when the request came over HTTPS (to the gateway,
or through a trusted proxy's `X-Forwarded-Proto`) or `ui.secure_cookie` says so. Signing out
ends the session on the server. The forms' POSTs are refused from any other origin
(`Sec-Fetch-Site`, else `Origin`): another site, or another port of this host, cannot sign a
browser out or in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from router.api import view_html
from router.api.auth import admin_key_matches
from router.api.chat import read_body
from router.api.client_address import came_over_https
from router.api.trajectories import family_of
from router.api.ui_sessions import UISessions
from router.engine import Engine
from router.errors import GatewayError
from router.privacy.at_rest import masked
from router.privacy.guard import exposure_summary, vault_of
from router.protocol.numbers import whole_number
from router.trajectory.identify import is_valid_id
from router.trajectory.state import ListQuery, Trajectory

COOKIE = "tandem_ui"
# No script, no outside resources, no framing: the pages are plain HTML with inline styles.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=HEADERS)


def _keys(request: Request) -> frozenset[str]:
    engine: Engine = request.app.state.engine
    if not engine.settings.ui.enabled:
        raise GatewayError(404, "the operator's view is off: set ui.enabled: true in the config", code="ui_disabled")
    keys: frozenset[str] = request.app.state.admin_keys
    if not keys:
        raise GatewayError(
            403, "the operator's view needs an admin key: configure admin_api_keys", code="ui_needs_admin_key"
        )
    return keys


def _signature(key: str, session_id: str, expires: int) -> str:
    return hmac.new(key.encode(), f"tandem-ui:{session_id}:{expires}".encode(), hashlib.sha256).hexdigest()


def _sessions(request: Request) -> UISessions:
    sessions: UISessions = request.app.state.ui_sessions
    return sessions


def _cookie_session(request: Request, keys: frozenset[str]) -> str | None:
    """The session id of the request's cookie when it is signed with one of the admin keys and
    has not expired (whether the session still exists is the store's to say)."""
    session_id, _, rest = request.cookies.get(COOKIE, "").partition(".")
    expires_text, _, signature = rest.partition(".")
    expires = whole_number(expires_text)
    if not session_id or expires is None or expires < time.time():
        return None
    matched = False
    for key in keys:  # every key compared, in constant time
        matched |= hmac.compare_digest(signature.encode(), _signature(key, session_id, expires).encode())
    return session_id if matched else None


def _presented_key(scheme: str, value: str) -> str | None:
    """The key an `Authorization` header of `scheme` (basic or bearer) carries, if it is readable."""
    if scheme == "bearer":
        return value.strip()
    try:
        _user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):  # binascii.Error, or a value that is not ASCII
        return None
    return password


async def signed_in(request: Request, keys: frozenset[str]) -> bool:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    scheme = scheme.lower()
    if scheme in ("basic", "bearer"):
        # A key presented is a guess to count (auth_throttle); a stale cookie is not.
        return admin_key_matches(request, _presented_key(scheme, value), keys)
    session_id = _cookie_session(request, keys)
    return session_id is not None and await _sessions(request).valid(session_id)


def _same_origin(request: Request) -> None:
    """Refuse a form's POST sent from another origin. Browsers say where a request comes from
    in `Sec-Fetch-Site` (every current one); older ones in `Origin`, compared with the Host the
    request was sent to. SameSite=Strict alone would let another port of this host through
    (same site, another origin). A request with neither header is no browser's, and carries
    no cookie a browser attached on its own."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if site is not None:
        allowed = site in ("same-origin", "none")
    elif origin is not None:
        allowed = urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()
    else:
        allowed = True
    if not allowed:
        raise GatewayError(
            403,
            "the operator's view takes this form only from its own pages (the request came from another origin)",
            type="permission_error",
            code="ui_cross_origin",
        )


def _challenge() -> Response:
    """401 with a Basic challenge (a browser given a key in the URL, or asking its user, sends
    it) and the login form as the body (shown when the user dismisses the dialog)."""
    response = _html(view_html.login_form(), 401)
    response.headers["WWW-Authenticate"] = 'Basic realm="Tandem operator\'s view", charset="UTF-8"'
    return response


def _shown(trajectory: Trajectory) -> dict[str, Any]:
    """The trajectory's fields, the task with its sensitive values as typed placeholders (found
    anew: the vault's originals are sealed, and an `allow` route keeps its task as it came)."""
    data = trajectory.as_dict()
    data["task_shown"] = masked(trajectory.task)[:160]
    data.pop("notes", None)
    return data


async def ui_home(request: Request) -> Response:
    keys = _keys(request)
    if not await signed_in(request, keys):
        return _challenge()
    engine: Engine = request.app.state.engine
    await engine.tracker.recorder.flush()
    found = await engine.tracker.store.recent(ListQuery(limit=100))
    return _html(view_html.trajectory_list(_shown(t) for t in found))


async def ui_trajectory(request: Request) -> Response:
    keys = _keys(request)
    if not await signed_in(request, keys):
        return _challenge()
    engine: Engine = request.app.state.engine
    trajectory_id = request.path_params["trajectory_id"]
    trajectory = None
    if is_valid_id(trajectory_id):
        await engine.tracker.recorder.flush()
        trajectory = await engine.tracker.store.get(trajectory_id)
    if trajectory is None:
        return _html(view_html.page("Not found", "<h1>No such trajectory</h1><p><a href='/ui'>back</a></p>"), 404)
    records = [r.as_dict() for r in await engine.tracker.store.records(trajectory.id)]
    privacy = exposure_summary(await vault_of(engine.tracker.store, trajectory), engine.settings.privacy_weights)
    family = await family_of(engine, trajectory)  # its parent and sub-agents, with their cost
    return _html(view_html.timeline(_shown(trajectory), records, privacy, family))


async def ui_login_form(request: Request) -> Response:
    _keys(request)
    return _html(view_html.login_form())


async def ui_login(request: Request) -> Response:
    keys = _keys(request)
    _same_origin(request)
    fields = parse_qs((await read_body(request, 16 * 1024)).decode("utf-8", "replace"))
    key = (fields.get("key") or [""])[0]
    if not admin_key_matches(request, key, keys):  # counted against the address when wrong
        return _html(view_html.login_form("That is not an admin key of this engine."), 401)
    # The key that matched signs the cookie.
    matched = [k for k in keys if hmac.compare_digest(key.encode(), k.encode())]
    engine: Engine = request.app.state.engine
    settings = engine.settings
    lifetime = int(settings.ui.session_s)
    expires = int(time.time()) + lifetime
    session_id = await _sessions(request).create(lifetime)
    response = RedirectResponse("/ui", status_code=303, headers=HEADERS)
    response.set_cookie(
        COOKIE,
        f"{session_id}.{expires}.{_signature(matched[0], session_id, expires)}",
        max_age=lifetime,
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=settings.ui.secure_cookie or came_over_https(request, settings.server.trusted_proxies),
    )
    return response


async def ui_logout(request: Request) -> Response:
    keys = _keys(request)
    _same_origin(request)
    session_id = _cookie_session(request, keys)
    if session_id is not None:
        await _sessions(request).revoke(session_id)
    response = RedirectResponse("/ui/login", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
    return response
