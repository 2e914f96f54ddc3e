"""Secrets in the forms a web application's debugging puts before an agent, written after the
detectors and scored blind once (a tenth set beside `later_forms.py`'s nine).

A request copied from the browser's devtools as `curl` or `fetch`, a HAR entry, a Postman
collection, a REST client's `.http` file, a Netscape cookie file, session cookies of the common
frameworks (Django, PHP, ASP.NET Core, Express, Rails, Java), a refresh token in local storage,
signed URLs (S3's and Cloud Storage's signatures and session tokens), OAuth redirects (a code, an
access token in the fragment), password-reset and magic-link URLs, a WebSocket URL's token, a
GraphQL login's variables, an access log's download token, an API key as `appid`. Values come
from `later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 53 of 75 values (0.707). Missed:
a session cookie whose name says no `session` (`JSESSIONID` in a HAR entry's JSON,
`.AspNetCore.Cookies`), Tomcat's `New session <id> created`, S3's `X-Amz-Signature`, an OAuth
code in a redirect, an `appid` in a query string, a Postman collection's auth values, and a
letters-only token in a REST client's variable. Rules since (router/privacy/web_secrets.py):
74 of 75 (249 of 250 over ten rounds; the letters-only token is left).

    python -m benchmarks.privacy.later_web [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, _b64, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("web", FORMS)


def lower(n: int) -> str:
    return "".join(R.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


@form
def curl_devtools() -> Form:
    session, csrf = lower(32), an(32)
    return (
        f"curl 'https://app.example.com/api/me' -H 'accept: application/json' "
        f"-H 'cookie: _ga=GA1.1.1234567.1700000000; sessionid={session}; csrftoken={csrf}' "
        f"-H 'x-csrftoken: {csrf}' --compressed",
        [session],
    )


@form
def har_entry() -> Form:
    bearer, jsession = an(40), hexs(32).upper()
    entry = {
        "request": {
            "method": "GET",
            "url": "https://api.example.com/v1/orders",
            "headers": [
                {"name": "Authorization", "value": f"Bearer {bearer}"},
                {"name": "Cookie", "value": f"JSESSIONID={jsession}"},
            ],
        }
    }
    return json.dumps({"log": {"entries": [entry]}}, indent=2), [bearer, jsession]


@form
def fetch_snippet() -> Form:
    token = hexs(40)
    return (
        f'fetch("https://api.example.com/v1/items", {{\n  "headers": {{\n    "accept": "*/*",\n'
        f'    "authorization": "Token {token}"\n  }},\n  "method": "GET"\n}});',
        [token],
    )


@form
def postman_apikey() -> Form:
    key = an(32)
    auth = {
        "auth": {"type": "apikey", "apikey": [{"key": "value", "value": key}, {"key": "key", "value": "X-API-Key"}]}
    }
    return json.dumps(auth, indent=1), [key]


@form
def rest_client_file() -> Form:
    token = an(40)
    return (
        f"@host = https://api.example.com\n@token = {token}\n\nGET {{{{host}}}}/me\nAuthorization: Bearer {{{{token}}}}\n",
        [token],
    )


@form
def netscape_cookies() -> Form:
    value = an(40)
    return (
        f"# Netscape HTTP Cookie File\n.example.com\tTRUE\t/\tTRUE\t1767225600\tsession_token\t{value}\n"
        f".example.com\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark\n",
        [value],
    )


@form
def php_session() -> Form:
    value = lower(26)
    return f"GET /cart.php HTTP/1.1\nHost: shop.example.com\nCookie: PHPSESSID={value}; lang=en\n", [value]


@form
def aspnet_cookie() -> Form:
    value = "CfDJ8" + an(180)
    return f"Set-Cookie: .AspNetCore.Cookies={value}; path=/; secure; samesite=lax; httponly", [value]


@form
def express_session() -> Form:
    value = f"s%3A{an(32)}.{an(43)}"
    return f"cookie: connect.sid={value}", [value]


@form
def rails_session() -> Form:
    value = f"{_b64(an(90))}--{hexs(40)}"
    return f"Cookie: _shop_session={value}", [value]


@form
def local_storage() -> Form:
    token = an(64)
    return f'> localStorage.getItem(\'auth\')\n\'{{"refreshToken":"{token}","userId":42}}\'', [token]


@form
def s3_presigned() -> Form:
    signature, session = hexs(64), _b64(an(150))
    url = (
        "https://reports.s3.amazonaws.com/q3.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=ASIAY34FZKBOKMUTVV7A%2F20240301%2Fus-east-1%2Fs3%2Faws4_request"
        f"&X-Amz-Date=20240301T120000Z&X-Amz-Expires=3600&X-Amz-Security-Token={session}"
        f"&X-Amz-SignedHeaders=host&X-Amz-Signature={signature}"
    )
    return url, [signature, session]


@form
def gcs_signed() -> Form:
    signature = hexs(256)
    return (
        "https://storage.googleapis.com/exports/data.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256"
        "&X-Goog-Credential=exporter%40proj.iam.gserviceaccount.com%2F20240301%2Fauto%2Fstorage%2Fgoog4_request"
        f"&X-Goog-Date=20240301T120000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={signature}",
        [signature],
    )


@form
def oauth_fragment() -> Form:
    token = an(43)
    return f"Redirected to https://app.example.com/callback#access_token={token}&token_type=Bearer&expires_in=3600", [
        token
    ]


@form
def oauth_code() -> Form:
    code = an(40)
    return (
        f'127.0.0.1 - - [01/Mar/2024:12:00:00 +0000] "GET /oauth/callback?code={code}&state=af0ifjsldkj HTTP/1.1" 302 0',
        [code],
    )


@form
def reset_link() -> Form:
    token = an(48)
    return f"Click here to reset your password: https://app.example.com/reset-password?token={token}", [token]


@form
def magic_link() -> Form:
    token = hexs(64)
    return f"Your sign-in link: https://app.example.com/auth/verify?email=ana%40acme.io&token={token}&type=magiclink", [
        token
    ]


@form
def websocket_url() -> Form:
    token = an(36)
    return f"WebSocket connection to 'wss://realtime.example.com/socket?access_token={token}&vsn=2.0.0' failed", [token]


@form
def graphql_login() -> Form:
    password = pw()
    body = {
        "operationName": "Login",
        "query": "mutation Login($email: String!, $password: String!) { login(email: $email, password: $password) { id } }",
        "variables": {"email": "ops@example.com", "password": password},
    }
    return json.dumps(body), [password]


@form
def access_log_download() -> Form:
    token = an(40)
    return f'10.1.2.3 - - [01/Mar/2024:12:00:00 +0000] "GET /files/report.zip?token={token} HTTP/1.1" 200 48213', [
        token
    ]


@form
def appid_query() -> Form:
    key = hexs(32)
    return f"GET https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid={key}&units=metric", [key]


@form
def remember_cookie() -> Form:
    value = an(120)
    return f"Set-Cookie: remember_user_token={value}; path=/; expires=Sat, 01 Mar 2025 12:00:00 GMT; HttpOnly", [value]


@form
def java_session_log() -> Form:
    value = hexs(32).upper()
    return f"2024-03-01 12:00:00.123 DEBUG [http-nio-8080-exec-4] o.a.c.c.C.[Tomcat] - New session {value} created", [
        value
    ]


def main(argv: list[str] | None = None) -> None:
    set_main("web", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
