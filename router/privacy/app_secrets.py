"""Credentials in mobile apps' build files that no name-and-value rule reads: an Android
manifest's `<meta-data>` whose name says token, key or secret (`android:name="com.mapbox.token"
android:value="X"`), an `Info.plist` key named for a secret and its `<string>`, and the password
Apple's `altool` is given with `-p` (not `@keychain:` or `@env:`, which name where it is kept).
"""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, command_password, command_rule, opaque_token
from router.privacy.detector import Detector

# What a key's or a setting's name says when its value is a secret.
_SECRET_WORD = r"(?i:api[_.-]?key|secret|token|password|passwd|private[_.-]?key|access[_.-]?key|auth[_.-]?key)"


def _not_apple_reference(value: str) -> bool:
    """altool's password, unless it names the keychain item or the variable that holds it."""
    return not value.startswith("@") and command_password(value)


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            rf"android:name=\"[^\"\n]{{0,80}}{_SECRET_WORD}[^\"\n]{{0,40}}\"[ \t\r\n]+"
            r"android:value=\"([^\"\n]{8,256})\""
        ),
        rb"android:name=\"",
        validate=opaque_token,
        group=1,
        reach=420,
        rule="android-meta-data-secret",
        keyword_core=14,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            rf"<key>[\w.-]{{0,60}}{_SECRET_WORD}[\w.-]{{0,40}}</key>[ \t\r\n]*<string>([^<\n]{{8,256}})</string>"
        ),
        rb"</key>[ \t\r\n]*<string>",
        validate=opaque_token,
        group=1,
        reach=270,
        lead=120,
        rule="plist-secret",
        keyword_core=20,
    ),
    command_rule(
        "altool-password",
        r"\baltool\b[^\n|;&]{0,240}?[ \t](?:-p|--password)[ \t=]+" + ARG,
        rb"altool",
        6,
        _not_apple_reference,
        reach=460,
    ),
)
