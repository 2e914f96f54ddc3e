"""Passwords people tell in other languages, and English phrasings the prose rules in
patterns.py miss: `Das Passwort ist X`, `Mot de passe : X`, `密码：X`, `비밀번호는 X 입니다`,
`I reset your password to X`, `Use X as the password`, `the sudo password, it's X`. The value
must look like a password (validators.prose_secret: a digit, a symbol or inner capitals), as in
English prose. (A login note's `u:` and `p:` lines were read too, and left out: their core cost
hyperscan's pass ~1.8 µs a KB of typical text, a fifth of it.)

The cores are the words for a password in each language (rare in English text and in code) or
the English phrasing's own words around the value, never `password` alone.
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.detector import Detector

# The word for a password, and the words that say "is", by language (the word may carry its
# case ending or particle: `Lösenordet`, `비밀번호는`, `hasła`).
_WORDS = (
    r"passw(?:o|ö)rt(?:es)?|kennwort(?:es)?|mot[ \t]+de[ \t]+passe|contrase(?:ñ|n)a|clave[ \t]+de[ \t]+acceso"
    r"|senha|wachtwoord|has(?:ł|l)(?:o|a)|(?:ş|s)ifre(?:si|niz)?|parola|l(?:ö|o)senord(?:et)?|passord(?:et)?"
    r"|adgangskode(?:n)?|salasana|jelsz(?:ó|o)|heslo|geslo|пароль|лозинка|κωδικ(?:ός|ό)(?:[ \t]+πρόσβασης)?"
    r"|كلمة[ \t]+(?:المرور|السر)|पासवर्ड|m(?:ậ|a)t[ \t]+kh(?:ẩ|a)u|kata[ \t]+sandi|kata[ \t]+laluan"
)
# Written glued to the words before them (`数据库密码`, `관리자 비밀번호는`): no word boundary.
_GLUED_WORDS = r"パスワード|密码|密碼|口令|비밀번호|암호|รหัสผ่าน"
# The same words for hyperscan's core, whose caseless matching is ASCII's: a capital that is
# not ASCII written out (`Пароль`, `Şifre`, `Κωδικός`).
_CORE_WORDS = (
    _WORDS.replace("(?:ş|s)ifre", "(?:ş|s|Ş)ifre")
    .replace("пароль", "[Пп]ароль")
    .replace("лозинка", "[Лл]озинка")
    .replace("κωδικ", "[Κκ]ωδικ")
    + "|"
    + _GLUED_WORDS
)
_COPULAS = (
    # Words, standing as words (not `er` inside `återställa`, `is` inside `utilisateur`).
    r"(?<![^\W\d_])(?:ist|est|es|era|é|è|was|is|är|er|on|jest|là|adalah|ialah|είναι|это)(?![^\W\d_])"
    # A dash between spaces (not a compound's: `Passwort-Vergessen`), a colon, an equals sign,
    # and the CJK copulas, glued.
    r"|(?<=[ \t])[-—–](?=[ \t])|:|：|=|是|为|為|は|는|은"
)
# The particles Korean and Japanese glue to the word, and the language's words between it and
# the copula (`für den Server`, `de la base de datos`, `dell'account`, `till routern`): up to
# five words on the same line.
_BETWEEN = r"(?:[ \t]+[^\s:：=]{1,20}){0,5}?"
_VALUE = r"[\"'`“‘«「]?([^\s\"'`“”‘’«»「」,;，。、]{3,199}[^\s\"'`“”‘’«»「」.,;:)，。、])"
_MULTILINGUAL = re.compile(
    rf"(?i)(?:(?<![^\W\d_])(?:{_WORDS})|(?:{_GLUED_WORDS}))(?:는|은|は|が|가|이)?{_BETWEEN}"
    rf"[ \t]*(?:{_COPULAS})[ \t]*{_VALUE}"
)
# `password` itself is also Italian's, Polish's in speech, and many others': with a copula that
# is not English (`La password dell'account è X`) nor an English word (`on`, `er`, `es`: the
# password on server-01 is no password; those languages have a word of their own, above).
_PASSWORD_ABROAD = re.compile(rf"(?i)\bpassword{_BETWEEN}[ \t]+(?:è|ist|est|é|är|jest|là|adalah|είναι)[ \t]+{_VALUE}")

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        _MULTILINGUAL,
        b"(?i)(?:" + _CORE_WORDS.encode() + rb")",
        validate=validators.prose_secret,
        group=1,
        reach=260,
        rule="password-in-other-words",
        keyword_core=40,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        _PASSWORD_ABROAD,
        rb"(?i)password[^\n]{0,40}[ \t](?:\xc3\xa8|ist|est|\xc3\xa9|\xc3\xa4r|jest|l\xc3\xa0|adalah"
        rb"|\xce\xb5\xce\xaf\xce\xbd\xce\xb1\xce\xb9)[ \t]",
        validate=validators.prose_secret,
        group=1,
        reach=260,
        rule="password-in-other-words",
        keyword_core=70,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # `reset your password to X`, `changed the root password to X`, `set the admin password to X`.
        re.compile(
            r"(?i)\b(?:reset|changed?|set|updated?)\s+(?:[\w-]{1,20}\s+){0,3}?(?:password|passphrase|pw)\s+to\s+"
            + _VALUE
        ),
        rb"(?i)(?:password|passphrase|\bpw)\s{1,3}to\s{1,3}[^\s]{4}",
        validate=validators.prose_secret,
        group=1,
        lead=120,
        reach=210,
        rule="password-set-to",
        keyword_core=30,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # `use X as the password`, `with X as your password`.
        re.compile(
            r"(?i)\b(?:use|using|with|try|enter|type)\s+"
            + _VALUE
            + r"\s+as\s+(?:the|your|a|my|our)\s+(?:[\w-]{1,20}\s+)?password\b"
        ),
        rb"(?i)\sas\s{1,3}(?:the|your|a|my|our)\s{1,3}(?:[\w-]{1,20}\s{1,3})?password\b",
        validate=validators.prose_secret,
        group=1,
        lead=220,
        rule="password-used-as",
        keyword_core=50,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # `the sudo password, it's X`.
        re.compile(r"(?i)\bpassword[,;:]?\s+(?:it's|it’s|it\s+is|its)\s+" + _VALUE),
        rb"(?i)password[,;:]?\s{1,3}(?:it's|it\xe2\x80\x99s|it\s{1,3}is|its)\s",
        validate=validators.prose_secret,
        group=1,
        reach=210,
        rule="password-in-prose-its",
        keyword_core=30,
    ),
)
