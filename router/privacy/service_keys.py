"""Keys of services no provider rule knows, by the name they are given, and secrets passed as a
call's arguments.

Hundreds of services issue keys with no prefix of their own (32 hex digits, 40 random
characters): a provider rule cannot know them, but code, configs and logs name them. A name
ending in `key` (`cloudconvert_key`, `godaddyKey`, `SALESFORCE_KEY1`, a log's `Using Key=…`, a
URL's `?key=…`) holds a service's key unless it says it is not secret (a cache, sort, primary or
partition key; a public, publishable, site or host key); the value must look generated
(validators.service_key), which names, paths, versions and words do not. A bare `key` is taken
only before `=` (a log's or a URL's `key=…`): `key:` is also a YAML or JSON map's field, whose
values (a CI cache's key, an object's path, a label) are not secrets; and a UUID or a digest
after a bare `key=` only in a URL's query.

The call form: a secret's name as a string and its value as the next argument
(`req.Header.Set("X-Api-Key", "…")`, `os.Setenv("API_TOKEN", "…")`, `headers.put('Secret', …)`).
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_WORDS

# The name: a word ending in `key` after a separator or a camel-case step (`godaddyKey`), or the
# bare word `key`; maybe numbered (`salesforce_key1`).
_KEY_NAME = (
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,40}(?:[_.-]|(?<=[a-z0-9])(?=K)))?(?:key|Key|KEY)[0-9]{0,2}(?![A-Za-z0-9])"
)
_KEY_HEAD = re.compile(_KEY_NAME)
# Then `=` or `:` (maybe after a closing quote or bracket and aligning spaces), and the value.
_SIGN = r"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}"
_QUOTED = r"[bru]?([\"'`])((?:(?!\1)[^\\\n]|\\.){16,4096})\1"
_BARE = r"([^\s\"'`,;}{<>\\&]{16,4096})"
# A name that says the key is no secret: an index's, a cache entry's, a public half.
_NOT_SECRET = re.compile(
    r"(?i)(?:public|pub|publishable|site|host|cache|sort|partition|primary|foreign|composite|unique|row|range"
    r"|hash|idempotency|dedup\w*|object|bucket|s3|lookup|map|dict|group|index|routing|shard|sequence|cursor|next|page"
    r"|sync|continuation|marker|websocket)[_.-]?(?:key|Key|KEY)[0-9]{0,2}\W{0,40}$"
)
_BARE_KEY = re.compile(r"(?<![A-Za-z0-9_.-])(?:key|Key|KEY)[0-9]{0,2}\W{0,40}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DIGEST = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _named_key(text: str, start: int, end: int) -> bool:
    """The name before the value says it is a secret: not an index's or a public key's; a bare
    `key` only before `=`, and not over a digest or a UUID (an object's or a cache entry's)."""
    before = text[max(0, start - 80) : start]
    if _NOT_SECRET.search(before):
        return False
    bare = _BARE_KEY.search(before)
    if bare is None:
        return True
    if not before.rstrip(" \t\"'`").endswith("="):
        return False
    # A URL's `?key=` is an API key whatever its shape; elsewhere a UUID or a digest under `key=`
    # is more often an object's or a cache entry's.
    in_query = bare.start() > 0 and before[bare.start() - 1] in "?&"
    return in_query or not (_UUID.match(text[start:end]) or _DIGEST.match(text[start:end]))


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_KEY_NAME + _SIGN + _QUOTED),
        rb"(?:key|Key|KEY)[0-9]{0,2}\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}[bru]?[\"'`]",
        validate=validators.service_key,
        check=_named_key,
        group=2,
        reach=4106,
        rule="service-key-quoted",
        keyword_core=48,
        head=_KEY_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_KEY_NAME + _SIGN + _BARE),
        rb"(?:key|Key|KEY)[0-9]{0,2}\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}[^\s\"'`,;}{<>\\&]{16}",
        validate=validators.service_key,
        check=_named_key,
        group=1,
        reach=4096,
        rule="service-key",
        keyword_core=64,
        head=_KEY_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # ("X-Api-Key", "…"): a secret's name as a string, its value the next argument.
        re.compile(
            r"(?i)[\"'][\w.-]{0,40}?(?:" + SECRET_WORDS + r"|key)[0-9]{0,2}[\"'][ \t]{0,3},[ \t]{0,3}"
            r"([\"'])([^\"'\s\\]{8,4096})\1"
        ),
        b"(?i)(?:" + SECRET_WORDS.encode() + rb"|key)[0-9]{0,2}[\"'][ \t]{0,3},[ \t]{0,3}[\"']",
        validate=validators.argument_secret,
        group=2,
        reach=4100,
        rule="secret-argument",
        keyword_core=48,
    ),
)
