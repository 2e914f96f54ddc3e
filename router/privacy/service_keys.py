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

# The name's last word, `key` (maybe numbered, `salesforce_key1`), after a separator or a
# camel-case step (`godaddyKey`); or the bare word `key` before `=`. The match begins at `key`;
# the words before it that say it is no secret are refused by look-behinds (`_not_after`). (The
# lookahead first: Python's search then skips most positions on one character.)
_BARE_NAME = r"(?=[kK])(?<![A-Za-z0-9_.-])(?:key|Key|KEY)[0-9]{0,2}(?![A-Za-z0-9])"
# Hyperscan's cores: a name's character before a named `key` (a bare `"Key":`, an object
# listing's field, is then no candidate at all), `=` after a bare one.
_NAMED_CORE = rb"(?:[A-Za-z0-9][_.-](?:key|Key|KEY)|[a-z0-9]Key|[A-Z]{3}KEY)[0-9]{0,2}"
_BARE_CORE = rb"(?:key|Key|KEY)[0-9]{0,2}"
# Then `=` or `:` (maybe after a closing quote or bracket and aligning spaces), and the value.
_SIGN = r"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}"
_EQUALS = r"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|=)[ \t]{0,3}"
_SIGN_CORE = rb"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}"
_EQUALS_CORE = rb"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|=)[ \t]{0,3}"
_QUOTED = r"[bru]?([\"'`])((?:(?!\1)[^\\\n]|\\.){16,4096})\1"
_QUOTED_CORE = rb"[bru]?[\"'`]"
_BARE = r"([^\s\"'`,;}{<>\\&]{16,4096})"
_BARE_VALUE_CORE = rb"[^\s\"'`,;}{<>\\&]{16}"
# The word before `key` in a name that says the key is no secret: an index's, a cache entry's,
# a public half's, a protocol's nonce (`Sec-WebSocket-Key`).
_NOT_SECRET = frozenset(
    (
        *("public", "pub", "publishable", "site", "host", "cache", "sort", "partition", "primary", "foreign"),
        *("composite", "unique", "row", "range", "hash", "idempotency", "dedup", "deduplication", "object"),
        # (Not `routing`: a message broker's routing key is a word, which the value's test refuses;
        # PagerDuty's is an integration's secret of 32 hex digits.)
        *("bucket", "s3", "lookup", "map", "dict", "group", "index", "shard", "sequence", "cursor"),
        *("next", "page", "sync", "continuation", "marker", "websocket"),
    )
)

# Names the assignment rules take already (`api_key`, `secretKey`, `ACCESS_KEY`): not read twice.
_COVERED = frozenset(("api", "access", "secret", "private", "account", "auth", "encryption", "signing"))


def _not_after(words: frozenset[str], separators: str = "_.-") -> str:
    """Look-behinds that refuse a `key` right after one of `words`, or after one and a separator
    (fixed widths, so a look-behind per length): a cache key is refused by the pattern, before
    any validation runs."""
    lengths = sorted({len(word) for word in words})
    alternatives = ["|".join(sorted(w for w in words if len(w) == size)) for size in lengths]
    return "".join(rf"(?<!(?i:{alt}))(?<!(?i:{alt})[{separators}])" for alt in alternatives)


# A named `key` after a separator, a camel-case step (`godaddyKey`) or glued to a name in
# capitals (`GITHUBKEY=`, `MAPSKEY`: `MONKEY`, `HOTKEY` hold no generated value). The covered
# names are the assignment rules' only joined by `_` or `-`: a properties file's dotted
# `api.key=`, `aws.secret.key=` are read here.
_NAMED = (
    r"(?=[kK])(?:(?<=[_.-])|(?<=[a-z0-9])(?=K)|(?<=[A-Z]{3})(?=KEY))"
    + _not_after(_NOT_SECRET)
    + _not_after(_COVERED, "_-")
    + r"(?:key|Key|KEY)[0-9]{0,2}(?![A-Za-z0-9])"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DIGEST = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _bare_key(text: str, start: int, end: int) -> bool:
    """A URL's `?key=` is an API key whatever its shape; elsewhere a UUID or a digest under a bare
    `key=` is more often an object's or a cache entry's."""
    at = start
    low = max(0, start - 48)
    while at > low and text[at - 1] not in _NAME_CHARS:  # back over the sign and quotes
        at -= 1
    while at > low and text[at - 1].isdigit():  # back over the name's number (`key2`)
        at -= 1
    in_query = at >= 4 and text[at - 4] in "?&"  # the character before `key`
    value = text[start:end]
    return in_query or not (_UUID.match(value) or _DIGEST.match(value))


def _key(rule: str, name: str, sign: str, value: str, core: bytes, check: object | None, group: int) -> Detector:
    return Detector(
        "SECRET_ASSIGNMENT",
        re.compile(name + sign + value),
        core,
        validate=validators.service_key,
        check=check,  # type: ignore[arg-type]
        group=group,
        reach=4106,
        rule=rule,
        keyword_core=72,
        head=re.compile(name),
    )


# A key's or token's name in a sentence or a list, then ` - `, `is` or `was` and the value (`API
# token - 'k0lj2mwl8n…'`, "the access key is AKD83…", `webex token — …`): where the password rule
# (patterns.py, "the password is …") takes any value after its word, a token's value must look
# generated (validators.service_key), which a sentence's next words do not.
_PROSE_WORDS = (
    r"(?:token|api[ _-]?key|access[ _-]?key|auth[ _-]?key|secret[ _-]?key|client[ _-]?secret"
    r"|license[ _-]?key|app[ _-]?key|secret)"
)
_PROSE_NAME = (
    r"(?i)(?<![\w-])(?<!page |next |sync )(?<!cursor |marker )(?<!pagination )(?<!continuation )(?<!idempotency )"
    + _PROSE_WORDS
)
_PROSE_SIGN = r"[ \t]{1,3}(?:[-–—]|\\u201[34]|is|was|is[ \t]+now)[ \t]{1,3}"  # a dash JSON-escaped too
_PROSE_SIGN_CORE = rb"[ \t]{1,3}(?:-|\xe2\x80[\x93\x94]|\\u201[34]|is|was|is[ \t]+now)[ \t]{1,3}"
_PROSE_VALUE = r"([\"'`]?)([^\s\"'`,;<>\\]{15,4095}[^\s\"'`,;<>\\.:)])\1(?![^\s,;.:)\]}\"'`\\])"
_PROSE_CORE_NAME = b"(?i)" + _PROSE_WORDS.encode()

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # The value ends before a sentence's stop; after it, an end of the text or of its quoting.
        re.compile(_PROSE_NAME + _PROSE_SIGN + _PROSE_VALUE),
        _PROSE_CORE_NAME + _PROSE_SIGN_CORE + rb"[\"'`]?[^\s\"'`,;<>\\]{16}",
        validate=validators.service_key,
        group=2,
        reach=4100,
        rule="secret-name-in-prose",
        keyword_core=64,
    ),
    _key("service-key-quoted", _NAMED, _SIGN, _QUOTED, _NAMED_CORE + _SIGN_CORE + _QUOTED_CORE, None, 2),
    _key("service-key", _NAMED, _SIGN, _BARE, _NAMED_CORE + _SIGN_CORE + _BARE_VALUE_CORE, None, 1),
    _key("service-key-quoted", _BARE_NAME, _EQUALS, _QUOTED, _BARE_CORE + _EQUALS_CORE + _QUOTED_CORE, _bare_key, 2),
    _key("service-key", _BARE_NAME, _EQUALS, _BARE, _BARE_CORE + _EQUALS_CORE + _BARE_VALUE_CORE, _bare_key, 1),
    Detector(
        "SECRET_ASSIGNMENT",
        # ("X-Api-Key", "…"): a secret's name as a string, its value the next argument; or a
        # map's pair written with its language's infix (Kotlin's `"token" to "…"`, Scala's and
        # Groovy's `"token" -> "…"`).
        re.compile(
            r"(?i)[\"'][\w.-]{0,40}?" + SECRET_WORDS + r"[0-9]{0,2}[\"'](?:[ \t]{0,3}(?:,|->)|[ \t]+to)[ \t]{0,3}"
            r"([\"'])([^\"'\s\\]{8,4096})\1"
        ),
        b"(?i)" + SECRET_WORDS.encode() + rb"[0-9]{0,2}[\"'](?:[ \t]{0,3}(?:,|->)|[ \t]+to)[ \t]{0,3}[\"']",
        validate=validators.argument_secret,
        group=2,
        reach=4100,
        rule="secret-argument",
        keyword_core=48,
    ),
)
