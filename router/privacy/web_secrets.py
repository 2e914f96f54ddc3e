"""Secrets a web application's debugging puts before an agent: session cookies under the names
frameworks give them (wherever the pair is written: a HAR entry's JSON, a devtools copy, a log),
a session id a server's log prints, signed URLs' signatures, an OAuth authorization code in a
redirect, API keys in a query string under a service's own name (`appid`), and a Postman
collection's auth values.

Each core is a literal name with the value's shape after it, so text without one costs nothing;
the value must look random (`credentials.opaque_token`) unless its shape says enough (a hex
signature, a session id of 32 hex digits).
"""

from __future__ import annotations

import re

from router.privacy.credentials import opaque_token
from router.privacy.detector import Detector

# Session cookies by the name their framework gives them: Java's, PHP's, ASP.NET's, Express's,
# Laravel's, CodeIgniter's, ColdFusion's.
_SESSION_NAMES = (
    r"JSESSIONID|PHPSESSID|ASP\.NET_SessionId|\.AspNetCore\.(?:Session|Cookies|Identity\.Application|Antiforgery\.\w+)"
    r"|connect\.sid|laravel_session|ci_session|CFTOKEN"
)
# The roles of a Postman auth's values that are secrets.
_ROLES = r"value|token|password|accessToken|access_token|clientSecret|client_secret"


def _app_key(value: str) -> bool:
    """A key under a service's query name: random, with a digit, not an app's dotted id
    (`appid=com.example.mail`)."""
    return opaque_token(value) and "." not in value and any(c.isdigit() for c in value)


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "API_KEY",
        # A vendor's header whose name says nothing of a key (Honeycomb's `X-Honeycomb-Team`).
        re.compile(r"(?i)\bx-honeycomb-team[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9_-]{20,128})"),
        rb"(?i)x-honeycomb-team",
        validate=opaque_token,
        group=1,
        reach=140,
        rule="vendor-header-key",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"(?<![\w.-])(?:{_SESSION_NAMES})=([^;\s,\"'&]{{16,4096}})"),
        rb"(?:JSESSIONID|PHPSESSID|ASP\.NET_SessionId|\.AspNetCore\.[A-Za-z.]{1,40}|connect\.sid|laravel_session"
        rb"|ci_session|CFTOKEN)=",
        validate=opaque_token,
        group=1,
        reach=4096,
        lead=60,
        rule="framework-session-cookie",
        keyword_core=60,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A server's log naming a session by its id (Tomcat's `New session 8A88… created`,
        # `sessionId=…`): 32 hex digits after the word.
        re.compile(
            r"(?i)\bsession(?:[ _-]?id)?[\"']?[ \t]{0,3}[:=]?[ \t]{0,3}[\"']?([0-9A-F]{32}|[0-9a-f]{32})(?![0-9A-Za-z])"
        ),
        rb"(?i)session(?:[ _-]?id)?[\"']?[ \t]{0,3}[:=]?[ \t]{0,3}[\"']?[0-9a-f]{32}",
        group=1,
        rule="session-id",
        lead=20,
    ),
    Detector(
        "CLOUD_KEY",
        # A signed URL's signature (S3's and CloudFront's query string, Cloud Storage's): whoever
        # holds the URL reads the object until it expires.
        re.compile(r"(?<=[?&])(?:X-Amz-Signature|X-Goog-Signature)=([0-9a-f]{64,1024})(?![0-9a-fA-F])"),
        rb"[?&](?:X-Amz-Signature|X-Goog-Signature)=[0-9a-f]{64}",
        group=1,
        reach=1024,
        rule="signed-url-signature",
        keyword_core=100,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # An OAuth authorization code in a redirect (`/callback?code=X&state=Y`, either order):
        # traded for tokens by whoever holds it, until it is used. The two within 400
        # characters: unbounded, a token of 20,000 `state=` and no `code=` took each to the
        # token's end (minutes a MB).
        re.compile(
            r"(?<=[?&#])code=([A-Za-z0-9._~%/+-]{16,512})(?=[&#][^\s\"'<>]{0,400}?\bstate=)"
            r"|(?<=[?&#])state=[^\s\"'<>&#]{1,200}[&#](?:[^\s\"'<>]{0,400}?&)?code=([A-Za-z0-9._~%/+-]{16,512})"
        ),
        rb"[?&#](?:code=[A-Za-z0-9._~%/+-]{16}|state=)",
        validate=opaque_token,
        value_span=lambda match: match.span(1) if match.group(1) is not None else match.span(2),
        reach=1024,
        rule="oauth-code",
        keyword_core=30,
    ),
    Detector(
        "API_KEY",
        # A service's own name for its key in a query string (`appid=`: OpenWeatherMap's).
        re.compile(r"(?<=[?&])(?:appid|app_id|app_key|appkey|client_secret)=([A-Za-z0-9._~-]{16,256})(?![\w.~-])"),
        rb"[?&](?:appid|app_id|app_key|appkey|client_secret)=[A-Za-z0-9._~-]{16}",
        validate=_app_key,
        group=1,
        reach=256,
        rule="query-app-key",
        keyword_core=30,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A Postman collection's auth (`"apikey": [{"key": "value", "value": X}]`, bearer's
        # `{"key": "token", …}`, basic's `{"key": "password", …}`): the value under its role.
        re.compile(
            rf"\"key\"[ \t]*:[ \t]*\"(?:{_ROLES})\"[ \t]*,"
            r"\s*(?:\"type\"[ \t]*:[ \t]*\"string\"[ \t]*,\s*)?\"value\"[ \t]*:[ \t]*\"([^\"\\\n]{8,4096})\""
        ),
        rb"\"key\"[ \t]{0,3}:[ \t]{0,3}\"(?:" + _ROLES.encode() + rb")\"",
        validate=opaque_token,
        group=1,
        reach=4200,
        rule="postman-auth",
        keyword_core=40,
    ),
)
