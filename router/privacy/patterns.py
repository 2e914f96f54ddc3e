"""Tandem's own detectors: typed secrets with fixed shapes, assignments of secrets, and personal
data (e-mail, cards, IBANs, US SSN, phones, IP addresses). National ids are in national_ids.py,
the provider secret rules in provider_rules.py.

Each is a regular expression that finds candidates plus, where the format has one, a validator
(Luhn and issuer ranges for cards, the IBAN registry for IBANs, the octet range of IPv4, the
shape and entropy of a secret) and context rules: validation is what keeps look-alikes (order
numbers, version strings, hashes, dates, snowflake ids, code) out.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from router.privacy import phones, validators
from router.privacy.credentials import password_value
from router.privacy.detector import Detector
from router.privacy.scripts import CJK, WORD

# Not inside a longer token; Chinese, Japanese, Korean and Thai text right against the value is
# no part of it (those scripts write no space before a number: `卡号4111…`, scripts.py). Every
# value it leads begins with a digit, looked at first: one test at most places of a window, where
# the two look-behinds (`WORD` is a longer class than `\w`) cost ~20 % more than the one before.
_B = rf"(?=\d)(?<!{WORD})(?<![.+-])"
_E = rf"(?!{WORD}|[@-])"
SECRET_WORDS = (
    r"(?:pass(?:word|wd|phrase|code)?|pwd|secrete|secret(?:[_-]?(?:access[_-]?)?key(?:[_-]?base)?)?|token|api[_-]?key|access[_-]?key"
    r"|auth[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|private[_-]?key|client[_-]?secret|credentials?"
    r"|encryption[_-]?key|signing[_-]?key|secret[_-]?string)"
)
# With the short ways to write `password` (`PW:`, `DB_PW=`, `X3_PSWD=`, `PSWRD`, `PASWORD`) and
# its plural, as login notes and scripts name one: in the names of the plain and quoted
# assignments only (in all seven cores that name a secret the two-letter word cost hyperscan's
# pass ~0.1 µs/KB of typical text; in these two, nothing measurable).
SECRET_NAMES = SECRET_WORDS.removesuffix(")") + "|pw|p[as]?s?w(?:o?r)?d|passwrd|passwords)"
# A name ending in a secret word (`DB_PASSWORD`, `"client_secret"`, `self.api_key`, and glued or
# camelCase ones: `ADMINPASSWORD`, `dbPassword`, `SessionToken`: the match starts at the word;
# pagination and idempotency tokens are no secrets, nor an ARN's `:secret:`), maybe numbered
# (`typeform_token1`), maybe a Ruby symbol (`:token => "…"`, `auth[:token] = "…"`), maybe
# JSON-escaped (`\"password\"`) or a subscript's (`os.environ["API_KEY"]`),
# then `=` or `:`, maybe after aligning spaces (Terraform, INI).
_NAME_HEAD = (
    # (The lookahead first: Python's search then skips most positions on one character.)
    r"(?i)(?=[pstace])(?<![0-9])(?<![^\s({\[,]:)(?<!next|page|sync)(?<!marker|cursor|client)(?<!existing)(?<!idempotency)(?<!continuation)"
    r"(?<!clientrequest)" + SECRET_NAMES + r"[0-9]{0,2}(?![A-Za-z0-9])"
)
# After the sign, a line break only where the next line is indented (YAML's value on the line
# below): `.env`'s `GITHUB_API_KEY=` with nothing after it is not given the next line's name.
_NAME = _NAME_HEAD + r"\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])(?:[ \t\r]|\n(?=[ \t])){0,3}"
# A declaration's string type between a name and its value (Go's `TOKEN string = "…"`, Kotlin's
# and Scala's `password: String = "…"`).
_TYPED = r":?[ \t]*(?:[Ss]tring|str|&str|&'static str|CharSequence)[ \t]*"
# Before a quoted value also: a C array's brackets (`char secret[25] = "…"`), or a comparison
# (`if (api_key == "…")`: a secret written into code to check against). No sign at all
# (`password "…";`) is not taken: in prose `pass` and `token` stand before quoted code.
# The sign after a name, maybe a comparison's, and the spaces after it.
_SIGN = r"(?::=|=>|[!=]==?|[:=])(?:[ \t\r]|\n(?=[ \t])){0,3}"
_QUOTED_NAME = _NAME_HEAD + r"\\?[\"']? ?\]?(?:\[\d{0,4}\])?[ \t]{0,32}" + _SIGN
_TYPED_NAME = _NAME_HEAD + r"[\"']?[ \t]{0,32}" + _TYPED + r":?=[ \t]{0,3}"
# (`@"…"`: an Objective-C string; `f"…"`, `rb'…'`: Python's.)
_QUOTED_VALUE = r"(?:[bBrRuUfF]{1,2}|@)?([\"'`])((?:(?!\1)[^\\\n]|\\.){6,4096})\1"
# A name with words after the secret's (`password_super_secure`, `apikey_myservice`): unless a
# word names something else (`password_hash`, `token_count`, `api_key_header`).
_SUFFIX = (
    r"(?:[_.-](?!(?:hash|hashed|digest|salt|len|length|min|max|field|name|names|file|path|dir|id|ids|url|uri"
    r"|type|label|prompt|policy|reset|format|env|var|header|param|regex|pattern|placeholder|hint|help|text|message"
    r"|msg|error|input|mode|source|provider|store|manager|endpoint|count|counts|counting|counter|expires|expiry|expiration|ttl|timeout"
    r"|version|prefix|suffix|template|widget|class|style|key|limit|size|index|col|column|ref|arn|secret|token"
    r"|valid|validity|strength|confirm|confirmation|required|enabled|changed|set|used|string|str|fmt|query|sql"
    r"|cmd|command|line|args|list|map|dict)(?![A-Za-z0-9]))"
    r"[A-Za-z0-9]{1,20}){1,3}"
)
_SUFFIXED_NAME = _NAME_HEAD + _SUFFIX + r"\\?[\"']? ?\]?[ \t]{0,32}" + _SIGN
# A secret's name given a value by an expression that falls back on a quoted literal
# (`TOKEN = process.env.API_TOKEN || "…"`, `os.getenv("API_KEY", "…")`, `?: "…"`, `or "…"`).
_DEFAULTED = (
    _NAME_HEAD
    + r"\\?[\"']?[ \t]*(?::=|=)(?!=)[^\n;]{1,100}?"
    + r"(?:\|\||\?\?|\?:|\bor\b|\b(?:getenv|get|env)\([ \t]*[\"'][^\"'\n]{1,80}[\"'][ \t]*,)"
    + r"[ \t]*[bru@]?([\"'`])([^\"'`\s\\]{16,512})\1"
)
_FALLBACK = re.compile(r"\|\||\?\?|\?:| or |get\(|env\(")
# The same where the environment is read by name and the literal is a branch the expression
# takes without it, in any declaration: a type between the name and its sign (Kotlin's
# `TOKEN: String = System.getenv("API_TOKEN") ?: "…"`, C's `const char *TOKEN = getenv(…) ?
# getenv(…) : "…"`), a PHP constant's definition (`define("TOKEN", getenv(…) ? … : "…")`),
# Ruby's `ENV[…] || "…"`, C#'s `GetEnvironmentVariable(…) ?? "…"`. Matched from the lookup's
# name (its core: typical text seldom holds one; Python's `environ`, everywhere in scripts, is
# left to the rule above, whose `get(` and ` or ` forms are Python's), the secret's name looked
# for before it on its line only where a literal was found (searched for first, the names cost
# value-dense text a tenth of its scan).
_LOOKUP = r"\b(?:getenv|GetEnvironmentVariable|ENV)\b"
_LOOKUP_DEFAULTED = (
    _LOOKUP
    + r"[^\n;]{0,100}?(?:\|\||\?\?|\?:|\bor\b|\?[^\n;:?]{0,100}:|\?)"
    + r"[ \t]*[bru@]?([\"'`])([^\"'`\s\\]{16,512})\1"
)
_NAMED_LOOKUP = re.compile(_NAME_HEAD + r"[\"']?[^\n;=]{0,40}?(?:=|,)(?!=)[^\n;]{0,60}?" + _LOOKUP)


def _named_lookup(text: str, start: int, _end: int) -> bool:
    """Whether a secret's name is given the lookup's value on the literal's line."""
    line = text.rfind("\n", 0, start) + 1
    return _NAMED_LOOKUP.search(text, max(line, start - 400), start) is not None


def _falls_back(text: str, low: int, high: int) -> bool:
    """Whether the candidate's line may hold a fallback (`_DEFAULTED`): most assignments' lines
    hold none, and the pattern's search for one cost value-dense text ~7 % of its scan."""
    end = text.find("\n", low + 20, high)
    return _FALLBACK.search(text, low, high if end < 0 else end) is not None


# An unquoted value holding brackets of different kinds, an opener and a closer of another kind
# after it (`k8]Pq(3x{Lm)`, `m{{h}o)p${e]…`): the plain assignment's value stops at a brace, and
# a password's test refuses brackets as code's. Its core asks for that pair, which calls and
# indexes (`get_password()`, `cfg["db"]`) do not hold.
_MIXED_BRACKETS = r"(?:\{[^\s\"'`]{0,40}[)\]]|\([^\s\"'`]{0,40}[}\]]|\[[^\s\"'`]{0,40}[)}])"
_CLOSES = {")": "(", "]": "[", "}": "{"}


def _mis_nested(value: str) -> bool:
    """Whether a bracket in `value` closes one of another kind (`{…)`): never code, whose
    brackets nest, nor a reference or a pattern; a generated password's symbols fall anyhow."""
    opened: list[str] = []
    for char in value:
        if char in "([{":
            opened.append(char)
        elif char in _CLOSES and opened and opened.pop() != _CLOSES[char]:
            return True
    return False


def symbol_password(value: str) -> bool:
    """An unquoted secret of letters, digits and symbols whose brackets do not nest."""
    if validators.is_reference(value) or "://" in value or not 8 <= len(value) <= 256:
        return False
    if not any(c.isalpha() for c in value) or validators.entropy(value) < 3.0:
        return False
    return _mis_nested(value)


# The unquoted assignment's hyperscan core (a name, its sign, 8 characters of a value).
_ASSIGNED_CORE = (
    b"(?i)" + SECRET_NAMES.encode() + rb"[0-9]{0,2}\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])\s{0,3}[^\s\"'`,;}{<>]{8}"
)
# A name field holding a secret's name and, after it, its value field: Kubernetes' and ECS's
# environment (`- name: DB_PASSWORD` / `value: "…"`, JSON one field a line), Postman's and
# CloudFormation's key/value pairs (`{"key": "token", "value": "…"}`, `ParameterKey` /
# `ParameterValue`), and SSM's parameters (`"Name": "/prod/db/password", "Type": "SecureString",
# "Value": "…"`: a path names it, and up to three short JSON fields stand between).
_BETWEEN = (
    r"(?:[\"'][A-Za-z]{1,20}[\"'][ \t]*:[ \t]*(?:\"[^\"\\\n]{0,100}\"|[\w.-]{1,40})[ \t]*,[ \t]*(?:\r?\n[ \t]*)?){0,3}"
)
_NAMED_VALUE = (
    r"(?i)(?<![\w-])(?:name|key|parameterkey)[\"']?[ \t]*[:=][ \t]*[\"']?[\w./-]{0,40}?"
    + _NAME_HEAD.removeprefix("(?i)")
    + r"[\"']?[ \t]*(?:,[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*(?:-[ \t]+)?)"
    + _BETWEEN
    + r"[\"']?(?:value|parametervalue)[\"']?[ \t]*[:=][ \t]*"
    + r"(?:([\"'])((?:(?!\1)[^\\\n]|\\.){6,4096})\1|([^\s\"',}\]]{6,4096}))"
)
# A secret's name whose value is an object holding it under `value` (`terraform output -json`:
# `"db_password": {"sensitive": true, "type": "string", "value": "…"}`), or declaring it with a
# default (CloudFormation's JSON `Parameters`, `"DBPassword": {"Type": "String", "Default": "…"}`;
# Terraform's JSON `variable` blocks).
_NESTED_VALUE = (
    _NAME_HEAD
    + r"[\"'][ \t]*:[ \t]*\{[^{}]{0,400}?[\"'](?:value|default)[\"'][ \t]*:[ \t]*\"((?:[^\"\\\n]|\\.){6,4096})\""
)
# `vault kv get` and `vault read` print a secret's fields as a table under `Key  Value`:
# `password    …`, the name and its value apart by spaces alone.
_VAULT_ROW = r"(?im)^[ \t]{0,8}[\w.-]{0,40}?" + _NAME_HEAD.removeprefix("(?i)") + r"[ \t]{2,}([^\s]{6,256})[ \t]*\r?$"
_VAULT_HEADER = re.compile(r"(?m)^Key[ \t]{2,}Value[ \t]*\r?$")


def _under_vault_header(text: str, start: int, end: int) -> bool:
    return _VAULT_HEADER.search(text, max(0, start - 4000), start) is not None


def _named_value_span(match: re.Match[str]) -> tuple[int, int]:
    """Where `_NAMED_VALUE`'s value is: between its quotes, or bare."""
    return match.span(2) if match.group(2) is not None else match.span(3)


NAME_HEAD = re.compile(_NAME_HEAD)
_LABEL_CARD = re.compile(r"(?i)(?:card|visa|master ?card|amex|pan|cc|credit|debit|maestro|jcb|卡)[^\n\d]{0,20}$")


# The e-mail core, `[A-Za-z0-9._%+-]@[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2}`, found natively
# (Detector.native): `@` is rare in most text, and hyperscan tracking where each match starts cost
# its pass ~3 % of a typical scan. A match starts one byte before its `@` (no `@` can be inside
# a domain), and the matches of one `@` merge into one span up to the last place a dot and two
# letters end inside the domain: the greedy domain pattern's end.
_EMAIL_LOCAL = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_EMAIL_DOMAIN = re.compile(rb"[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2}")


def email_candidates(data: bytes) -> list[tuple[int, int]]:
    """Merged spans (byte offsets) of the e-mail core's matches, as hyperscan gives them."""
    spans: list[tuple[int, int]] = []
    at = data.find(b"@", 1)
    while at >= 0:
        if data[at - 1] in _EMAIL_LOCAL and (domain := _EMAIL_DOMAIN.match(data, at + 1)):
            start, end = at - 1, domain.end()
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        at = data.find(b"@", at + 1)
    return spans


# E-mail addresses with letters of other scripts (`jürgen.müller@bücher.de`, `user@例え.jp`,
# RFC 6531 and IDNA), or with combining accents or zero-width characters written into them (which
# hide an ASCII address from the pattern above): the exact pattern reads letters and digits of any
# script and keeps those marks inside the value, so the address goes whole. Candidates: an `@`
# with a byte of a non-ASCII character within 64 bytes of it.
_MARKS = "\u0300-\u036f\u200b-\u200d\u2060"
_ANY = f"(?:[^\\W_]|[{_MARKS}])"  # a letter or a digit of any script, or such a mark
_INTL_LABEL = f"{_ANY}(?:(?:{_ANY}|-){{0,62}}{_ANY})?"
# A local part may be written in Chinese or Japanese (`用户@例子.广告`), but such letters right
# before ASCII ones are the sentence that gives the address (`我的邮箱是bob.smith@…`, `メールはtaro@…`):
# the local part holds no CJK letter followed by an ASCII letter or digit, and may begin after
# one. The same at the end: an ASCII top-level domain ends where such text begins (`…@example.com是我的`).
_LOCAL_CHAR = f"(?:(?![{CJK}][A-Za-z0-9]){_ANY}|[._%+\\-])"
INTL_EMAIL = re.compile(
    f"(?:(?<![\\w.+\\-{_MARKS}])|(?<=[{CJK}])(?=[A-Za-z0-9]))(?![{CJK}][A-Za-z0-9]){_ANY}{_LOCAL_CHAR}{{0,63}}"
    f"@{_INTL_LABEL}(?:\\.{_INTL_LABEL})*"
    f"\\.(?:[A-Za-z]{{2,24}}(?![^\\W{CJK}]|[\\-{_MARKS}])|(?:[^\\W\\d_]|[{_MARKS}]){{2,24}}(?![\\w\\-{_MARKS}]))"
)


def intl_email_candidates(data: bytes) -> list[tuple[int, int]]:
    """Spans (byte offsets) around each `@` that has a non-ASCII character's byte near it."""
    spans: list[tuple[int, int]] = []
    if data.isascii():
        return spans
    at = data.find(b"@", 1)
    while at >= 0:
        if not data[max(at - 64, 0) : at + 64].isascii():
            if spans and at - 1 <= spans[-1][1]:
                spans[-1] = (spans[-1][0], at + 1)
            else:
                spans.append((at - 1, at + 1))
        at = data.find(b"@", at + 1)
    return spans


_IBAN_HEAD = re.compile(r"(?:[A-Z]{2}|[a-z]{2})\d{2} ?$")


def _bearer_long_enough(text: str, start: int, end: int) -> bool:
    """A prose password may be 6 characters (`hunter2`), a bearer token not: 8 or more."""
    return end - start >= 8 or not text[max(0, start - 12) : start].rstrip(" \t\"'`“‘").lower().endswith("bearer")


# Words that say the number after them is a card's (a check digit aside): a card's word in the
# languages people write it in, or an issuer's name (`issued by jcb`, `american_express credit
# card`); not `pan` or `credit` alone, which name other numbers too (an Indian tax id, credits).
# `visa` is one: the numbers the validator takes (15-19 digits) are no travel visa's.
# `discover` only before `card`: alone it is a verb (`… discover more`).
_ISSUERS = r"visa|master[ _-]?card|amex|american[ _-]express|jcb|maestro|diners(?:[ _-]club)?|union[ _-]?pay|rupay"
_CARD_SAID = re.compile(
    r"(?i)(?<![\w-])(?:(?:(?:credit|debit|bank|payment|discover|" + _ISSUERS + r")[ _-]?card|card|cc)"
    r"(?:[ -]?(?:number|no|num|nr|#))?|" + _ISSUERS + r"|carte(?: bancaire| de cr[ée]dit| de d[ée]bit)?"
    r"|(?:(?:kredit|bank|ec|giro|debit)[ -]?)?karte(?:nnummer)?|tarjeta(?: de cr[ée]dito| de d[ée]bito)?"
    r"|carta di credito|cart[ãa]o(?: de cr[ée]dito| de d[ée]bito)?|(?:credit|betaal|bank)?kaart(?:nummer)?"
    r"|creditcard(?:nummer)?)(?![\w-])[^\n\d]{0,16}$"
)
# After the number: its security code, its expiry date or its issuer (`4119… with CVV 071`,
# `… exp. 04/27`, `… issued by jcb`); an expiry only with its month and year (`session 8374…
# expires in 3600 s` is an id's).
_CARD_AFTER = re.compile(
    r"(?i)[^\n\d]{0,24}?(?<![\w-])(?:(?:cvv2?|cvc2?|csc|security code|" + _ISSUERS + r")(?![\w-])"
    r"|(?:expir(?:y|es|ation)|exp\.?)(?:[ \t]+date)?[ \t:]*(?:on[ \t]+)?(?:0?[1-9]|1[0-2])[ \t]*/[ \t]*\d\d(?:\d\d)?\b)"
)


# Every number the validators take begins with four digits together (unseparated, or printed in
# groups led by a four: validators._CARD_GROUPS): a core that says so gives hyperscan fewer
# places to follow (real logs: ~20 % fewer candidates, ~1.1 µs a KB less).
_CARD_CORE = rb"(?:^|[^\w.+-])\d{4}[ -]?(?:\d[ -]?){7}\d"


def _card_said(text: str, start: int, end: int) -> bool:
    return _card_context(text, start, end) and bool(
        _CARD_SAID.search(text, max(0, start - 40), start) or _CARD_AFTER.match(text, end, end + 48)
    )


def _card_context(text: str, start: int, end: int) -> bool:
    """Unseparated runs of 17-19 digits (snowflake ids, nanosecond timestamps), 12 and 13 digits
    (Maestro, old Visa; mostly durations and ids) are cards only beside a card word; digits
    after an IBAN's country and check digits are its account number."""
    if _IBAN_HEAD.search(text, max(0, start - 5), start):
        return False
    digits = end - start - text.count(" ", start, end) - text.count("-", start, end)
    if digits in (12, 13, 17, 18, 19) and digits == end - start:
        return bool(_LABEL_CARD.search(text, max(0, start - 30), start))
    return True


# A phone: an optional international prefix, then one run of 7-15 digits, or groups split by
# separators (the first may be a lone country or trunk digit; later ones have two or more).
_UNIT = r"(?:\(\d{1,5}\)[ .-]?|\d{%s}(?:[ .-]{1,2}|(?=\()))"
# Not inside a token (CJK text right before it is none: scripts.py). After a colon only when a
# word (maybe abbreviated) ends at it: a phone URI's scheme (`whatsapp:+1…`, `tel:+44…`) or a
# field's name (`Office:(516)733-3989`, `Tel.:…`, `电话：…`, its full-width colon read as
# ASCII); phones.check keeps those after a phone's or a field's word and refuses the rest
# (`uid:4155552671`).
_PHONE_BOUNDARY = rf"(?:(?<!{WORD})(?<![+./:@-])|(?<=[^\W\d_]:)|(?<=[^\W\d_]\.:))"
_PHONE = re.compile(
    _PHONE_BOUNDARY
    + r"(?:"
    # International: after `+`, `00` or `011` groups of any size (`+33 4 67 72 01 98`); a CSV
    # field may hold it, even between digit-led fields (`1,+44 20 7946 0958,3`).
    + r"(?P<international>(?:\+|\(\+\d{1,3}\) ?|00|011[ -]?)(?:\d{7,15}|"
    + _UNIT % "1,8"
    + r"{1,6}\d{2,12}))"
    # National: later groups have two digits or more (`115.9.135.217` is no phone); after a
    # digit and a comma it is the tail of a grouped amount.
    + r"|(?<!\d,)(?:\d{7,15}|"
    + _UNIT % "1,8"
    + _UNIT % "2,8"
    + r"{0,5}\d{2,12})"
    + r")(?:\s?(?:x|ext\.?|#)\s?\d{1,6})?"
    + rf"(?(international)(?!{WORD}|[/:@]|[.-]\d)|(?!{WORD}|[/:@]|[.,-]\d))"
)
# A number with a slash after its area code, as German, Austrian and Swiss lines write one
# (`0176/12345678`, `+49 176/ 12345678`, `Tel. 030/1234567`): beside a phone word only
# (phones.check_slashed), so its own pattern, on the labelled phone's windows.
_SLASHED_PHONE = re.compile(
    _PHONE_BOUNDARY
    + r"(?:\+\d{1,3}[ ]?(?:\(0\)[ ]?)?|00\d{1,3}[ ]?)?\(?\d{2,5}\)?[ \t]?/[ \t]?\d{2,10}(?:[ -]\d{2,8}){0,3}"
    + rf"(?!{WORD}|[/:@]|[.,-]\d)"
)
# Where a match may begin (a `+`, a bracket or a digit at a boundary): the exact pattern is tried
# only there, instead of at every character of a window (see Detector.head). The character comes
# first, its boundary checked behind it: re then skips ahead to the next `+`, `(` or digit.
_PHONE_HEAD = re.compile(rf"[+(\d](?:(?<!{WORD}.)(?<![+./:@-].)|(?<=[^\W\d_]:.)|(?<=[^\W\d_]\.:.))")
# Its hyperscan core: every way the pattern can hold 7 digits or more (fewer are never phones),
# in three parts compiled apart (Detector.split_core): international or bracketed; three groups
# or more (a 4-digit group then a 2-digit one only split by spaces: not a date); two groups.
_PHONE_CORE_BOUNDARY = rb"(?:^|[^\w+./:@-])"
_PHONE_CORE_ALTERNATIVES = (
    rb"\+\d|(?:00|011)[ -]?\d|\(\d{1,5}\)[ .-]?\d{2}",
    # (A 4-digit group's two ways written as one branch: spelt as two, the same shapes cost
    # hyperscan's automaton ~0.6 µs a KB of typical text more.)
    rb"(?:\d{1,3}|\d{5,8})[ .-]{1,2}\(?\d{2,8}\)?[ .-]{1,2}\(?\d{2}"
    rb"|\d{4}(?:[ .-]{1,2}\(?\d{3,8}\)?| {1,2}\(?\d{2}\)?)[ .-]{1,2}\(?\d{2}|\d{1,8}\(\d{2}",
    # Two groups: 1-4 digits then 3-6, or 5-8 then 2. A superset of the shapes with 7 digits
    # or more (`0.500` is a candidate too, refused by the exact pattern): spelt as the five
    # shapes, hyperscan's automaton cost ~1.6 µs a KB of typical text more, for ~0.1 fewer
    # candidates a KB.
    rb"\d{1,4}[ .-]{1,2}\d{3,6}|\d{5,8}[ .-]{1,2}\d{2}",
)
_PHONE_CORE = _PHONE_CORE_BOUNDARY + b"(?:" + b"|".join(_PHONE_CORE_ALTERNATIVES) + b")"
_PHONE_CORE_PARTS = tuple(_PHONE_CORE_BOUNDARY + b"(?:" + part + b")" for part in _PHONE_CORE_ALTERNATIVES)
# A PEM private key's BEGIN line (key_pieces.py reads its pieces from it too).
PRIVATE_KEY_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"


def _json_object(part: str) -> bool:
    """Whether a JWT's part is base64url of a JSON object."""
    try:
        return isinstance(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))), dict)
    except (binascii.Error, ValueError):
        return False


def _jwt_parts(value: str) -> bool:
    """A JWT with its signature part (or its empty signature's dot) stands on its shape; one with
    no third part only when its header and its claims are JSON objects (no run of `eyJ…` base64
    cut short)."""
    parts = value.split(".")
    return len(parts) > 2 or (_json_object(parts[0]) and _json_object(parts[1]))


def _no_git_user(value: str) -> bool:
    """Not the `git` user of a forge's SSH remotes (`git@github.com:owner/repo.git`): no one's
    mailbox, and in every Maven `scm:git:` line and `git clone` an agent runs."""
    return not value.lower().startswith("git@")


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PRIVATE_KEY",
        # The body holds no `-----` (base64 and headers): a BEGIN line with no END after it is
        # refused at the next line of dashes, not after reading its whole window (a text of BEGIN
        # lines alone read each window once per line: quadratic).
        re.compile(PRIVATE_KEY_BEGIN + r"(?:[^-]|-(?!----))+-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        PRIVATE_KEY_BEGIN.encode(),
        reach=16384,
    ),
    Detector(
        "JWT",
        # Signed or not (`alg: none` tokens end with the second dot, or with the claims when the
        # empty signature's dot is left off: then both parts must read as JSON objects).
        re.compile(
            r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.(?:[A-Za-z0-9_-]{16,}|(?![\w-]))|(?![\w.-]))"
        ),
        rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8}",
        validate=_jwt_parts,
        reach=4096,
    ),
    Detector(
        "URL_CREDENTIALS",
        # The user may be empty (`redis://:password@host`).
        re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s/:@\"'<>]*:[^\s/@\"'<>]+@[^\s/\"'<>]+"),
        rb"://[^\s/:@\"'<>]*:[^\s/@\"'<>]+@",
        reach=600,
        lead=16,
        validate=validators.url_credentials,
    ),
    Detector(
        "CLOUD_KEY",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|ANPA|ANVA|AIPA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"
        ),
        rb"(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|ANPA|ANVA|AIPA|A3T[A-Z0-9])[A-Z0-9]{16}",
        validate=validators.not_stand_in,
        rule="aws-access-key",
    ),
    Detector(
        "CLOUD_KEY",
        re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"),
        rb"AIza[0-9A-Za-z_-]{35}",
        validate=validators.not_stand_in,
        rule="google-api-key",
    ),
    Detector(
        "CODE_TOKEN",
        re.compile(r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"),
        rb"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{50}",
        reach=256,
        validate=validators.not_stand_in,
        rule="github-token",
    ),
    Detector(
        "AI_KEY",
        re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20,}"),
        rb"sk-[A-Za-z0-9_-]{20}",
        reach=256,
        validate=validators.ai_key,
        rule="openai-anthropic-key",
    ),
    Detector(
        "AI_KEY",
        # The keys of the model and agent-tool services agents are configured with, by their
        # published prefixes and lengths (gitleaks' rules lack them): Groq, xAI, Replicate,
        # LangSmith, Pinecone, ElevenLabs, Tavily, Firecrawl.
        re.compile(
            r"(?<![\w-])(?:gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9_]{80}|r8_[A-Za-z0-9_-]{37}"
            r"|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}|sk_[a-f0-9]{48}"
            r"|tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}|fc-[a-f0-9]{32})(?![\w-])"
        ),
        rb"gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9_]{80}|r8_[A-Za-z0-9_-]{37}|lsv2_(?:pt|sk)_[a-f0-9]{32}"
        rb"|pcsk_[A-Za-z0-9]{5}|sk_[a-f0-9]{48}|tvly-[A-Za-z0-9-]{32}|fc-[a-f0-9]{32}",
        reach=128,
        validate=validators.not_stand_in,
        rule="ai-service-key",
    ),
    Detector(
        "MESSAGING_TOKEN",
        re.compile(r"(?<![\w.-])(?:xoxe\.xox[bp]|xox[abposre]|xapp)-[A-Za-z0-9-]{10,}"),
        rb"(?:xoxe\.xox[bp]|xox[abposre]|xapp)-[A-Za-z0-9-]{10}",
        reach=256,
        validate=validators.slack_token,
        rule="slack-token",
    ),
    Detector(
        "AI_KEY",
        # Together AI, LlamaCloud and Amazon Bedrock API keys, by their published prefixes.
        re.compile(
            r"(?<![\w-])(?:tgp_v1_[A-Za-z0-9_-]{43}|llx-[A-Za-z0-9_-]{48}|bedrock-api-key-[A-Za-z0-9+/=]{32,400})(?![\w-])"
        ),
        rb"tgp_v1_[A-Za-z0-9_-]{43}|llx-[A-Za-z0-9_-]{48}|bedrock-api-key-[A-Za-z0-9+/=]{32}",
        reach=8,
        validate=validators.prefixed_token,
        rule="ai-service-key",
    ),
    Detector(
        "CLOUD_KEY",
        # Hosting and cloud platforms' tokens, by their published prefixes: Cloudflare's account,
        # user and API tokens, Vercel's, Netlify's personal tokens, Heroku's, Supabase's
        # management tokens, Google's OAuth client secrets, Docker Swarm's join tokens and unlock
        # keys, New Relic's user keys (gitleaks' rule takes those only beside the word
        # `newrelic`), Akamai's client tokens, Defined Networking's API keys, 1Password's service
        # account tokens.
        re.compile(
            r"(?<![\w-])(?:cf(?:at|ut|k)_[A-Za-z0-9]{40,60}|vc[pikar]_[A-Za-z0-9]{40,70}|nfp_[A-Za-z0-9]{36,40}"
            r"|HRKU-(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9_-]{60})"
            r"|sbp_(?:v0_)?[a-f0-9]{40}|GOCSPX-[A-Za-z0-9_-]{28}|SWMTKN-1-[a-z0-9]{50}-[a-z0-9]{25}|NRAK-[A-Z0-9]{27}"
            r"|SWMKEY-1-[A-Za-z0-9+/]{43}|akab-[A-Za-z0-9]{16}-[A-Za-z0-9]{16}|dnkey-[A-Z0-9]{26}-[A-Z0-9]{52}"
            r"|ops_eyJ[A-Za-z0-9_-]{40,2000})"
            r"(?![\w-])"
        ),
        rb"cf(?:at|ut|k)_[A-Za-z0-9]{40}|vc[pikar]_[A-Za-z0-9]{40}|nfp_[A-Za-z0-9]{36}|HRKU-[A-Za-z0-9_-]{36}"
        rb"|sbp_(?:v0_)?[a-f0-9]{40}|GOCSPX-[A-Za-z0-9_-]{28}|SWMTKN-1-[a-z0-9]{50}|NRAK-[A-Z0-9]{27}"
        rb"|SWMKEY-1-[A-Za-z0-9+/]{43}|akab-[A-Za-z0-9]{16}-[A-Za-z0-9]{16}|dnkey-[A-Z0-9]{26}|ops_eyJ[A-Za-z0-9_-]{40}",
        reach=2048,
        validate=validators.prefixed_token,
        rule="platform-token",
    ),
    Detector(
        "CODE_TOKEN",
        # Developer tools' tokens: Docker Hub's personal and organisation access tokens, Figma's
        # personal tokens, Bitbucket's app passwords and HTTP access tokens, Postman's access
        # tokens, GitLab's runner registration and workspace tokens, Sentry's organisation tokens.
        re.compile(
            r"(?<![\w-])(?:dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,40}|figd_[A-Za-z0-9_-]{40}|PMAT-[A-Z0-9]{26}"
            r"|BBDC-[A-Za-z0-9+/@_-]{44}|gl(?:rtr|wt)-[A-Za-z0-9_-]{20,64}|sntrys_eyJ[A-Za-z0-9+/=_-]{60,400})(?![\w-])"
            r"|(?<![A-Za-z0-9])ATBB[A-Za-z0-9_=.-]{28,36}(?![\w-])"
        ),
        rb"dckr_(?:pat|oat)_[A-Za-z0-9_-]{24}|figd_[A-Za-z0-9_-]{40}|PMAT-[A-Z0-9]{26}|ATBB[A-Za-z0-9_=.-]{28}"
        rb"|BBDC-[A-Za-z0-9+/@_-]{44}|gl(?:rtr|wt)-[A-Za-z0-9_-]{20}|sntrys_eyJ[A-Za-z0-9+/=_-]{60}",
        reach=400,
        validate=validators.prefixed_token,
        rule="dev-tool-token",
    ),
    Detector(
        "API_KEY",
        # Notion's integration tokens, PostHog's personal and project secret keys (not its
        # project's public `phc_` key), WunderGraph Cosmo's API keys.
        re.compile(
            r"(?<![\w-])(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|ph[xsra]_[A-Za-z0-9]{40,60}|cosmo_[a-f0-9]{32})(?![\w-])"
        ),
        rb"ntn_[0-9]{11}[A-Za-z0-9]{35}|ph[xsra]_[A-Za-z0-9]{40}|cosmo_[a-f0-9]{32}",
        reach=32,
        validate=validators.prefixed_token,
        rule="saas-token",
    ),
    Detector(
        "PAYMENT_KEY",
        # A Stripe webhook's signing secret.
        re.compile(r"(?<![\w-])whsec_[A-Za-z0-9+/]{32,88}(?![\w-])"),
        rb"whsec_[A-Za-z0-9+/]{32}",
        reach=64,
        validate=validators.prefixed_token,
        rule="stripe-webhook-secret",
    ),
    Detector(
        "MESSAGING_TOKEN",
        # A Telegram bot token: the bot's id, `:AA`, 33 characters (a shape nothing else writes).
        re.compile(r"(?<![\w:-])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])"),
        rb"\d{8}:AA[A-Za-z0-9_-]{33}",
        reach=40,
        validate=validators.not_stand_in,
        rule="telegram-bot-token",
    ),
    Detector(
        "API_KEY",
        # A Mailchimp API key: 32 hex digits and the account's data centre (`-us21`).
        re.compile(r"(?<![\w-])[0-9a-f]{32}-us\d{1,2}(?![\w-])"),
        rb"[0-9a-f]{32}-us\d",
        reach=4,
        validate=validators.not_stand_in,
        rule="mailchimp-key",
    ),
    Detector(
        "MESSAGING_TOKEN",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/+]{20,}"),
        rb"https://hooks\.slack\.com/",
        reach=256,
        rule="slack-webhook",
    ),
    Detector(
        "PAYMENT_KEY",
        # Secret and restricted keys; a publishable key (`pk_live_…`) is public by design, written
        # into web pages and apps.
        re.compile(r"(?<![\w])(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{20,}"),
        rb"(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{20}",
        reach=256,
        validate=validators.not_stand_in,
        rule="stripe-key",
    ),
    Detector(
        "PAYMENT_KEY",
        # Square's OAuth application secret (its access tokens are gitleaks' `square-access-token`,
        # whose published rules lack this one).
        re.compile(r"(?<![\w-])sq0csp-[0-9A-Za-z_-]{43}(?![\w-])"),
        rb"sq0csp-[0-9A-Za-z_-]{43}",
        validate=validators.not_stand_in,
        rule="square-secret",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A quoted value: spaces, `{ } $` and escaped quotes allowed inside.
        re.compile(_QUOTED_NAME + _QUOTED_VALUE),
        b"(?i)"
        + SECRET_NAMES.encode()
        + rb"[0-9]{0,2}\\?[\"']? ?\]?(?:\[\d{0,4}\])?[ \t]{0,32}(?::=|=>|[!=]==?|[:=])\s{0,3}"
        + rb"(?:[bBrRuUfF]{1,2}|@)?[\"'`]",
        validate=validators.quoted_secret,
        group=2,
        reach=4106,
        rule="secret-assignment-quoted",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # The same, declared with a string type (its own core: in the one above, tracking where
        # matches start made hyperscan's automaton too large, and not tracking it widened every
        # window the pattern searches).
        re.compile(_TYPED_NAME + _QUOTED_VALUE),
        b"(?i)"
        + SECRET_WORDS.encode()
        + rb"[0-9]{0,2}[\"']?[ \t]{0,32}:?[ \t]*(?:[Ss]tring|str|&str|&'static str|CharSequence)[ \t]*:?=",
        validate=validators.quoted_secret,
        group=2,
        reach=4106,
        keyword_core=90,
        rule="secret-assignment-typed",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A quoted value under a name with words after the secret's: it must look like a secret
        # (no space, a letter and a digit or a symbol), since such names also hold settings.
        re.compile(_SUFFIXED_NAME + r"[bru@]?([\"'`])((?:(?!\1)[^\\\n]|\\.){10,4096})\1"),
        b"(?i)"
        + SECRET_WORDS.encode()
        + rb"[0-9]{0,2}[_.-][A-Za-z0-9_.-]{1,62}\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[!=]==?|[:=])\s{0,3}[bru@]?[\"'`]",
        validate=validators.suffixed_secret,
        group=2,
        reach=4106,
        keyword_core=160,  # the longest match of the core (no start tracked: a large automaton)
        rule="secret-assignment-suffixed",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_NAMED_VALUE),
        b"(?i)(?:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?[\\w./-]{0,40}" + SECRET_WORDS.encode(),
        validate=validators.quoted_secret,
        value_span=_named_value_span,
        reach=4200,
        keyword_core=100,
        rule="secret-named-value",
        head=re.compile(r"(?i)(?<![\w-])(?:name|key|parameterkey)[\"']?[ \t]*[:=]"),
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_NESTED_VALUE),
        b"(?i)" + SECRET_WORDS.encode() + rb"[\"'][ \t]*:[ \t]*\{",
        validate=validators.quoted_secret,
        group=1,
        reach=4600,
        keyword_core=60,
        rule="secret-nested-value",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_VAULT_ROW),
        b"(?i)" + SECRET_WORDS.encode() + rb"[ \t]{2}",
        validate=password_value,
        check=_under_vault_header,
        group=1,
        reach=300,
        lead=50,
        keyword_core=40,
        rule="vault-table-secret",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A password's crypt(3) hash, as /etc/shadow and .htpasswd hold them (MD5, Apache's MD5,
        # SHA-256, SHA-512, bcrypt, yescrypt): a weak password is found again from its hash.
        re.compile(
            r"(?<![\w$])(?:\$(?:1|apr1|5|6)\$(?:rounds=\d{1,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{22,86}"
            r"|\$2[abxy]?\$\d\d\$[./0-9A-Za-z]{53}|\$(?:y|gy|7)\$[./0-9A-Za-z]{1,30}\$[./0-9A-Za-z]{1,64}\$[./0-9A-Za-z]{20,86})"
            r"(?![./0-9A-Za-z])"
        ),
        rb"\$(?:1|apr1|5|6|2[abxy]?|y|gy|7)\$[./0-9A-Za-z]",
        reach=200,
        lead=2,
        validate=validators.not_stand_in,
        rule="password-hash",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # The literal a secret's name falls back on: it must look generated (a service key's
        # look), since such expressions also fall back on names and messages. Its candidates are
        # the unquoted assignment's (the same core, found once by hyperscan: a core of its own,
        # reaching over the expression to the literal, cost the pass ~2 % of typical text).
        re.compile(_DEFAULTED),
        _ASSIGNED_CORE,
        validate=validators.service_key,
        group=2,
        reach=640,
        gate=_falls_back,
        rule="secret-default",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_LOOKUP_DEFAULTED),
        rb"getenv|GetEnvironmentVariable|ENV[\[.]",
        validate=validators.service_key,
        check=_named_lookup,
        group=2,
        reach=760,
        keyword_core=24,
        rule="secret-default",
        head=re.compile(_LOOKUP),
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A quoted value compared with a secret's name after it (`if ("…" == password)`).
        re.compile(
            r"(?i)(?<![\w\\])([\"'`])((?:(?!\1)[^\\\n]|\\.){6,256})\1[ \t]{0,3}[!=]==?[ \t]{0,3}[\w$.]{0,40}?"
            + _NAME_HEAD.removeprefix("(?i)")
        ),
        # (The core starts at the sign: quotes are too common a start for hyperscan's pass.)
        b"(?i)[!=]==?[ \t]{0,3}[\\w$.]{0,40}" + SECRET_WORDS.encode(),
        validate=validators.quoted_secret,
        group=2,
        lead=270,
        keyword_core=96,
        rule="secret-compared",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A password of symbols, brackets among them (a trailing comma is the line's syntax),
        # under a secret's name, maybe with words after it (`db_pass_secure := …`).
        re.compile(
            _NAME_HEAD
            + "(?:"
            + _SUFFIX
            + r")?\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])(?:[ \t\r]|\n(?=[ \t])){0,3}"
            + r"(?=[^\s\"'`]{0,40}"
            + _MIXED_BRACKETS
            + r")([^\s\"'`]{7,255}[^\s\"'`,;])"
        ),
        b"(?i)"
        + SECRET_NAMES.encode()
        + rb"[0-9]{0,2}(?:[_.-][A-Za-z0-9]{1,20}){0,3}\\?[\"']? ?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}[^\s\"'`]{0,40}"
        + _MIXED_BRACKETS.encode(),
        validate=symbol_password,
        group=1,
        reach=300,
        keyword_core=160,
        rule="secret-assignment-symbols",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(_NAME + r"([^\s\"'`,;}{<>\\]{8,4096})"),
        _ASSIGNED_CORE,
        validate=validators.secret_value,
        group=1,
        reach=4096,
        rule="secret-assignment",
        head=NAME_HEAD,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Passwords in prose: "the password is hunter2!", "password for bob: Xy7…", "my PIN is
        # 4821", "password has been reset to Xy7…", "Bearer …".
        re.compile(
            r"(?i)(?:\b(?:password|passwd|passphrase|passcode|pwd|pw|pin(?:\s(?:code|number))?)\b"
            r"(?:\s+(?:for|of|on)(?:\s+[\w@.-]{1,40}){1,4}?)?"
            r"\s{0,3}(?:\b(?:is(?:\s+now)?|was|will\s+be)\b|(?:\b(?:is|was|has\s+been|have\s+been)\s+)?"
            r"\b(?:set|changed|reset|updated)\s+to\b|:)(?:\s{0,3}:)?\s{0,3}|\bbearer\s+)"
            r"[\"'`“‘]?([^\s\"'`“”‘’,;]{3,199}[^\s\"'`“”‘’.,;:)])"
        ),
        rb"(?i)pass(?:word|wd|phrase|code)|pwd|\bpw\b|\bpin\b|bearer\s",
        validate=validators.prose_secret,
        check=_bearer_long_enough,
        group=1,
        reach=260,
        rule="secret-in-prose",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # More ways prose gives a password: in quotes or backticks after the word (`temp password
        # \`Xy7…\``), bare after it (`Wi-Fi: Guest, password Xy7…`: with a digit), and a user and
        # password after a word for logging in (`Creds: admin / Xy7…`, `log in with admin:Xy7…`,
        # `connect as report/Xy7…@ORCL`; not a URL's path, `/login/v2/token`).
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pw)[ \t]{1,4}(?:[`\"'“‘]([^\s`\"'“”‘’]{6,200})[`\"'”’]"
            r"|(?=[^\s]*\d)(?!0[xX][0-9a-fA-F]+\b)([^\s`\"'“”‘’,;=(){}\[\]<>/]{5,199}[^\s`\"'“”‘’.,;:)?=(){}\[\]<>/])(?=[\s.,;:!?)]|$))"
            r"|(?<![/\w])(?:creds?|credentials|log[ \t]?in(?:[ \t]{1,4}with)?|sign[ \t]?in(?:[ \t]{1,4}with)?"
            r"|conn(?:ect)?(?:[ \t]{1,4}as)?)\b[ \t]{0,4}:?[ \t]{1,4}[\w.@+-]{1,64}(?:[ \t]/[ \t]|/|:)"
            r"(?=[^\s]*\d)([^\s`\"'“”‘’,;@/{}\[\]()<>=]{5,199}[^\s`\"'“”‘’.,;:)?@/{}\[\]()<>=])(?=[\s.,;:!?)@]|$)"
        ),
        # (Cores that hold the value's shape: the words alone are everywhere in code and logs.)
        rb"(?i)(?:password|passwd|passphrase|\bpw)[ \t]{1,4}(?:[`\"'][^\s`\"']{6}|[^\s]{0,40}\d)"
        rb"|(?:creds?|credentials|log[ \t]?in(?:[ \t]{1,4}with)?|sign[ \t]?in(?:[ \t]{1,4}with)?"
        rb"|conn(?:ect)?(?:[ \t]{1,4}as)?)"
        rb"[ \t]{0,4}:?[ \t]{1,4}[\w.@+-]{1,64}(?:[ \t]/[ \t]|/|:)[^\s]{0,40}\d",
        validate=validators.prose_secret,
        value_span=lambda match: match.span(next(g for g in (1, 2, 3) if match.group(g) is not None)),
        reach=300,
        keyword_core=200,
        rule="secret-in-prose",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A token or a key given in prose after a colon a few words on (`Use this token to call
        # the API: …`, `Here's the secret key for the bucket: …`) or a key right after its name
        # (`hardcode api key …`): letters and digits, generated-looking.
        re.compile(
            r"(?i)\b(?:(?:token|api[ _-]?key|secret[ _-]key|access[ _-]key|private[ _-]key)"
            r"(?:[ \t]{1,4}[A-Za-z']{1,15}){0,4}[ \t]{0,4}:[ \t]*"
            r"|(?:api[ _-]?key|secret[ _-]key|access[ _-]key)[ \t]+)[`\"'“‘]?"
            r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])([A-Za-z0-9][A-Za-z0-9_\-+/=.]{15,199})"
        ),
        rb"(?i)(?:token|api[ _-]?key|secret[ _-]key|access[ _-]key|private[ _-]key)[A-Za-z' \t]{0,80}:[ \t]*"
        rb"[`\"']?[A-Za-z0-9][A-Za-z0-9_\-+/=.]{15}|(?:api[ _-]?key|secret[ _-]key|access[ _-]key)[ \t]+"
        rb"[`\"']?[A-Za-z0-9][A-Za-z0-9_\-+/=.]{15}",
        validate=validators.secret_value,
        group=1,
        reach=280,
        keyword_core=200,
        rule="token-in-prose",
    ),
    Detector(
        "EMAIL",
        re.compile(
            rf"(?<!{WORD})(?<![.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{{0,63}}@[A-Za-z0-9](?:[A-Za-z0-9-]{{0,62}}"
            r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}"
            r"(?![A-Za-z0-9-])"
        ),
        rb"[A-Za-z0-9._%+-]@[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2}",
        native=email_candidates,
        validate=_no_git_user,
        # Where a match may begin: a local part's first character at a boundary (see
        # _PHONE_HEAD). Searched for, the pattern was tried at every character of the window
        # before the `@`, each try reading up to 64 characters of local part.
        head=re.compile(rf"[A-Za-z0-9](?<!{WORD}.)(?<![.+-].)"),
        reach=300,
        lead=64,  # the core starts one character before the `@`; a local part has up to 64
    ),
    Detector(
        "EMAIL",
        # URL-encoded, as a query string or a form body carries one (`?email=ana.lima%40acme.io`,
        # a `+` in it as `%2B`); redacted as written, so restore gives the encoded text back.
        re.compile(
            r"(?:(?<![\w.+%-])|(?<=%[0-9A-Fa-f]{2}))[A-Za-z0-9](?:[A-Za-z0-9._+-]|%(?!40)[0-9A-Fa-f]{2}){0,63}"
            r"%40[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*"
            r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
        ),
        rb"[A-Za-z0-9._+-]%40[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2}",
        reach=300,
        lead=192,  # a local part of 64 characters, each written as `%XX` at the most
        rule="email-url-encoded",
    ),
    Detector(
        "EMAIL",
        INTL_EMAIL,
        rb"@[\x80-\xff]",  # never compiled: the candidates are `intl_email_candidates`'
        native=intl_email_candidates,
        reach=300,
        lead=80,  # the local part: 64 characters and the marks written into it
        rule="EMAIL_INTL",
    ),
    Detector(
        "IBAN",
        # In capitals as printed, or all in lower case as people type one into a chat (`my iban
        # is gb82west…`); never mixed. Lower case passes the same mod-97 and registry checks.
        re.compile(
            r"(?<![A-Za-z0-9])(?:[A-Z]{2} ?\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,4})?"
            r"|[a-z]{2} ?\d{2}(?:[ -]?[a-z0-9]{4}){2,7}(?:[ -]?[a-z0-9]{1,4})?)(?![A-Za-z0-9])"
        ),
        rb"(?:^|[^A-Za-z0-9])(?:[A-Z]{2} ?\d{2}(?:[ -]?[A-Z0-9]{4}){2}|[a-z]{2} ?\d{2}(?:[ -]?[a-z0-9]{4}){2})",
        validate=validators.iban,
        reach=30,
        head=re.compile(r"[A-Za-z](?<![A-Za-z0-9].)"),  # where a match may begin (see _PHONE_HEAD)
    ),
    Detector(
        "CARD",
        re.compile(_B + r"(?:\d[ -]?){11,18}\d" + _E),
        _CARD_CORE,
        validate=validators.card,
        check=_card_context,
        reach=12,
    ),
    Detector(
        "CARD",  # the same core: one hyperscan expression for both
        re.compile(_B + r"(?:\d[ -]?){14,18}\d" + _E),
        _CARD_CORE,
        validate=validators.card_given,
        check=_card_said,
        reach=12,
        rule="card-said",
    ),
    Detector(
        "US_SSN",
        re.compile(_B + r"\d{3}-\d{2}-\d{4}" + _E),
        rb"(?:^|[^\w.+-])\d{3}-\d{2}-\d{4}",
        validate=validators.ssn,
    ),
    Detector(
        "PHONE",
        _PHONE,
        _PHONE_CORE,
        check=phones.check,
        reach=24,
        lead=8,
        head=_PHONE_HEAD,
        split_core=_PHONE_CORE_PARTS,
    ),
    Detector(
        "PHONE",
        _PHONE,
        phones.LABEL_CORE,  # unseparated national numbers stand only beside a phone word
        check=phones.check,
        reach=64,
        keyword_core=phones.LABEL_SPAN,
        follows=True,
        head=_PHONE_HEAD,
        gate=phones.digits_within,
    ),
    Detector(
        "PHONE",
        _SLASHED_PHONE,
        phones.LABEL_CORE,  # the same core as the labelled phone's: one hyperscan expression
        check=phones.check_slashed,
        reach=64,
        keyword_core=phones.LABEL_SPAN,
        follows=True,
        head=_PHONE_HEAD,
        gate=phones.slash_within,
        rule="PHONE_SLASHED",
    ),
    Detector(
        "IP_ADDRESS",
        # Not inside a longer dotted run or a host name; a sentence's full stop may follow it.
        re.compile(rf"(?=\d)(?<!{WORD})(?<!\.)(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?!{WORD}|\.{WORD})"),
        rb"(?:^|[^\w.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",
        validate=validators.ipv4,
        check=validators.ip_context,
    ),
    Detector(
        "IP_ADDRESS",
        re.compile(
            rf"(?=[0-9a-fA-F])(?<!{WORD})(?<!:)(?:[0-9a-fA-F]{{1,4}}:){{1,7}}(?::|(?::[0-9a-fA-F]{{1,4}}){{1,7}}|"
            rf"[0-9a-fA-F]{{1,4}})(?!{WORD}|:)"
        ),
        # Every valid form has `::` or three colons within its first groups: one end per address.
        rb"(?:^|[^\w:])[0-9a-fA-F]{1,4}:(?::|[0-9a-fA-F]{1,4}:(?::|[0-9a-fA-F]{1,4}:))",
        validate=validators.ipv6,
        reach=40,
        lead=40,
    ),
)
