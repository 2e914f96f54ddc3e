"""The password a URL with credentials holds (`scheme://user:password@host`), as written and
percent-decoded: each a value of its own beside the URL (guard.py), since the same password is
often printed bare elsewhere (a `--requirepass` line, a `.env` file, a tool's output)."""

from __future__ import annotations

from urllib.parse import unquote

# A shorter password is a word other text holds anyway (`pass`, `x`): replaced everywhere, it
# would turn the agent's text into placeholders.
MIN_CHARS = 6


def url_passwords(url: str) -> list[str]:
    """The URL's password, and its percent-decoded form where it differs; none when the URL
    has no password of `MIN_CHARS` or more."""
    _scheme, separator, rest = url.partition("://")
    if not separator:
        return []
    userinfo, at, _host = rest.rpartition("@")
    if not at:
        return []
    _user, colon, password = userinfo.partition(":")
    if not colon or len(password) < MIN_CHARS:
        return []
    found = [password]
    decoded = unquote(password)
    if decoded != password and len(decoded) >= MIN_CHARS:
        found.append(decoded)
    return found
