"""Validators that keep look-alikes out: check digits, checksums, ranges and entropy.

Each takes the candidate value as the detector matched it and says whether it is real.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import re

from stdnum import iban as _iban
from stdnum import numdb
from stdnum.iso7064 import mod_97_10


def luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = ord(char) - 48
        if index % 2:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


# Issuer prefixes (IIN ranges) with the lengths each issues: Visa, Mastercard (2-series
# included), Amex, Discover, Diners, JCB (the 15-digit 2131/1800 too), UnionPay, Maestro and
# Dankort (their published IINs, 12-19 digits; Dankort's 5019).
_CARD_PREFIX = re.compile(
    r"^(?:4\d{12}(?:\d{3}){0,2}|(?:5[1-5]\d|2(?:2[2-9]|[3-6]\d|7[01]))\d{13}|2720\d{12}|3[47]\d{13}"
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12,15}|3(?:0[0-5]|[68]\d)\d{11,16}|35(?:2[89]|[3-8]\d)\d{12,15}"
    r"|(?:2131|1800)\d{11}|62\d{14,17}|(?:5018|5019|5020|5038|5893|6304|6759|676[1-3])\d{8,15})$"
)


_CARD_GROUPS = re.compile(
    r"^\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}$|^\d{4}[ -]\d{6}[ -]\d{4,5}$|^\d{4}(?:[ -]\d{4}){3}[ -]\d{1,3}$"
)


def card(value: str) -> bool:
    """Issuer range and length, Luhn, and printed as cards are (in fours, or 4-6-5)."""
    if (" " in value or "-" in value) and not _CARD_GROUPS.match(value):
        return False
    digits = value.replace(" ", "").replace("-", "")
    return 12 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn(digits)


def card_given(value: str) -> bool:
    """A number a sentence calls a card's (`my card 3598 8993 2305 3410 is lost`, `card number
    8914673251949775`) whose issuer range or check digit is wrong: a mistyped or made-up number
    someone gives as their card's is still one, whatever its first digit. 15-19 digits (most
    cards; shorter runs are mostly ids), printed as cards are, not one or two digits repeated nor
    zeros in half the places (a placeholder's or a round timestamp's: `1700000000000000`)."""
    if (" " in value or "-" in value) and not _CARD_GROUPS.match(value):
        return False
    digits = value.replace(" ", "").replace("-", "")
    return 15 <= len(digits) <= 19 and len(set(digits)) > 2 and digits.count("0") * 2 < len(digits)


@functools.lru_cache(maxsize=4096)  # overlapping candidate windows validate the same value again
def iban(value: str) -> bool:
    """The IBAN registry's lengths and formats per country, and mod 97: python-stdnum's
    `iban.validate(value, check_country=False)` (the national check digits are not all known),
    with the registry's entry for the country read once per country rather than per value."""
    if value.isascii():
        # stdnum's compact and mod 97 in string and integer operations (stdnum converts each
        # character apart, in Python, which cost more than the rest of the check): the same
        # answers on ASCII text, where its look-alike characters (dashes, spaces) do not occur.
        number = value.replace(" ", "").replace("-", "").replace(".", "").strip().upper()
        rearranged = number[4:] + number[:4]
        if not rearranged.isalnum() or int(rearranged.translate(_BASE_36)) % 97 != 1:
            return False
    else:
        try:
            number = _iban.compact(value)
            if not mod_97_10.is_valid(number[4:] + number[:4]):
                return False
        except Exception:
            return False
    bban = _bban(number[:2])
    return bban is not None and bban.match(number[4:]) is not None


_BBAN: dict[str, re.Pattern[str] | None] = {}
# A letter's value in mod 97 (`A` is 10, … `Z` is 35), as stdnum's `int(letter, 36)`.
_BASE_36 = str.maketrans({letter: str(int(letter, 36)) for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"})


def _bban(country: str) -> re.Pattern[str] | None:
    """The registry's shape of a country's account part (None: no such country), as python-stdnum
    reads it; looking it up costs more than the rest of the check, so it is kept per country."""
    if country not in _BBAN:
        entry = numdb.get("iban").info(country)[0][1] if country else {}
        _BBAN[country] = _iban._struct_to_re(entry.get("bban", "")) if entry else None
    return _BBAN[country]


def ipv4(value: str) -> bool:
    parts = value.split(".")
    if not (len(parts) == 4 and all(p.isdigit() and int(p) <= 255 and (p == "0" or p[0] != "0") for p in parts)):
        return False
    # The unspecified, loopback and broadcast addresses name no host of anyone's, nor does a
    # netmask (255.0.0.0/8 is reserved: `netmask 255.255.0.0` in ifconfig's output).
    return value != "0.0.0.0" and parts[0] not in ("127", "255")


def ipv6(value: str) -> bool:
    if value.count("::") > 1 or value in ("::", "::1"):
        return False
    groups = [g for g in value.split(":") if g]
    full = "::" not in value
    if full and len(groups) != 8:
        return False
    # Compressed forms need enough structure not to be a time (12:30) or a Python slice.
    return 2 <= len(groups) <= 8 and (full or len(groups) >= 3 or value.startswith("fe80") or value == "::1")


def ssn(value: str) -> bool:
    area, group, serial = value[0:3], value[4:6], value[7:11]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


# A reference to a secret, not the secret: `${DB_PASSWORD}`, `{{ secret }}`, `$TOKEN`, `%(pw)s`,
# `<password>`, `os.environ[...]`, and stand-ins people write in examples.
_REFERENCE = re.compile(
    r"^(?:\$?\$\{[^}]*\}|\$\{\{.*\}\}|\{\{.*\}\}|\{%.*%\}|\$\(.*\)|\$[A-Za-z_][\w.]*|\$(?:::)?env\(\w+\)"
    r"|%\(\w+\)[sd]?|%\w+%|%s|\{[\w.\[\]'\"()]*\}"
    r"|<[^>]*>|\[[^\]]*\]|\*+|x+|X+|\.+|#+|(?:os\.)?(?:environ|getenv|env|process\.env|secrets?|vars|config|settings)\b.*)$"
)
_STAND_INS = {
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "changeme",
    "change_me",
    "password",
    "passw0rd",
    "secret",
    "redacted",
    "<redacted>",
    "your_password",
    "yourpassword",
    "your-password",
    "example",
    "placeholder",
    "required",
    "optional",
    "string",
    "hidden",
    "masked",
    "dummy",
    "test",
    "testing",
}
# Code, not a value: a call, an attribute path, a name, an index.
_CODE = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(.*\)?|\[.*\]?)?[,;)]*$|.*\w\(.*")
# (`"…=" + PASSWORD + "…"` read from quote to quote; a password may end in `+` or `.` itself).
# Only an operand between the operators is code (` + this.password + `): a password may begin
# with `+` or `.` itself (`.L26#z*_DA`, an AWS secret key `+YsU4…`).
_CONCATENATION = re.compile(r"^\s*[+.]\s*[A-Za-z_$][\w$.]*(?:\(\))?\s*[+.]?\s*$|[A-Za-z_]\w*\s+[+.]\s*$|\s\+\s")
_LOWER_RUN = re.compile(r"[a-z]+")
_SLOT = re.compile(r"\{\d?\}|%[sd](?![A-Za-z0-9])")  # (`%dp85` inside a password is no slot)
_VERSIONED = re.compile(r"^[A-Za-z]+(?:[-_ ][A-Za-z]+)*[-_.@]v?\d+(?:[.-]\d+)*$")  # `SalesResults-1.2`
_DOTTED = re.compile(r"^[A-Za-z_-]+(?:\.[A-Za-z_-]+)+$")  # `settings.service.api_key`, a host name
_NAME_ONLY = re.compile(r"^[A-Za-z_][A-Za-z_.]*$")
_PROSE = re.compile(r"(?i)\b(?:your|enter|the|please|must|should|will|here|goes)\b")


def entropy(value: str) -> float:
    counts = collections.Counter(value)  # counted in C, in the order characters first occur
    size = len(value)
    return -sum(c / size * math.log2(c / size) for c in counts.values())


def is_reference(value: str) -> bool:
    """A reference to a secret or a stand-in for one, not a secret (documented examples, such
    as AWS's `…EXAMPLEKEY` and `EXAMPLE-PASSWORD`, included)."""
    stripped = value.strip()
    # (a value read out of escaped text may keep the escape's backslash and the line's colon:
    # `password is None:\\`)
    if stripped.rstrip(":\\").lower() in _STAND_INS or bool(_REFERENCE.match(stripped)) or len(set(stripped)) <= 2:
        return True
    if _FAKE.search(stripped):
        return True
    if not not_stand_in(stripped) or _PUT_HERE.search(stripped) is not None or _MASKED.search(stripped):
        return True
    return "EXAMPLE" in stripped and not stripped.startswith(("AKIA", "ASIA"))  # key ids: as before


# A value that says it is none (`fake-key`, `somefakekey`, `dummy_secret`, `not-a-real-token`), as
# tests and examples write them (`Fake!2024x`, with a digit or a symbol, is a password).
_FAKE = re.compile(r"(?i)(?:^|[-_])(?:fake|dummy|not[-_]?a[-_]?real)(?:$|[-_])|^[\"']?[a-z]*fake[a-z]*[\"']?$")
# A value masked in part (`xoxp-5723…-####################`, `sk-proj-********`).
_MASKED = re.compile(r"\*{4,}|#{6,}|[xX]{8,}|•{3,}")
# A stand-in that says what to put there: `sha256~XXXX_PUT_YOUR_TOKEN_HERE_XXXX`, `REPLACE_ME`.
_PUT_HERE = re.compile(r"(?i)(?:^|[^a-z])(?:your[_-]|put[_-]|replace[_-]?(?:me|with)|insert[_-])|[_-]here(?:$|[^a-z])")


def slack_token(value: str) -> bool:
    """A Slack token's shape: digits first after the prefix (`xoxb-1234…`, `xapp-1-…`), and as
    long as a real one (a bot token ~55 characters, a configuration token 160 and more), not a
    stand-in (`xoxb-abcdef-abcdef`, `xoxp-1234567890`, `xoxe.xoxp-1-RANDOMSTRINGHERE`)."""
    if not not_stand_in(value) or value.endswith("-"):
        return False
    body = value[value.index("-") + 1 :]
    if not body[:1].isdigit():
        return False
    return len(value) >= (100 if value.startswith("xoxe.") else 30)


def ai_key(value: str) -> bool:
    """An OpenAI or Anthropic key; an Anthropic one (`sk-ant-api03-…`, `sk-ant-admin01-…`) has
    its provider's length and ends in `AA`, as gitleaks' rules have it."""
    if not not_stand_in(value):
        return False
    return not value.startswith("sk-ant-") or (len(value) >= 100 and value.endswith("AA"))


def not_stand_in(value: str) -> bool:
    """Not a stand-in written in a key's shape (`ghp_xxxx…`, `AKIAXXXXXXXXXXXXXXXX`, `AIzaaaa…`,
    `xoxb-xxxxxxxxx-xxxx`): three quarters or more of it one character. A random key is never."""
    size = len(value)
    if size < 12 or len(set(value)) > size // 4 + 1:
        return True  # too many distinct characters for one to fill three quarters (a random key's)
    return max(collections.Counter(value).values()) * 4 < size * 3


# Six characters in a row, each the one before it plus or minus one, or all the same
# (`abcdef`, `012345`, `76543210`, `xxxxxx`): how stand-ins end a key's shape; a random key of
# 40 characters holds such a run about once in 10^8.
_TYPED_RUN = 6


def _typed_run(value: str) -> bool:
    run, step = 1, 2  # 2: no step yet (a step is -1, 0 or 1)
    for before, after in itertools.pairwise(value):
        difference = ord(after) - ord(before)
        if difference not in (-1, 0, 1) or not (before.isalnum() and after.isalnum()):
            run, step = 1, 2
            continue
        run, step = (run + 1 if difference == step else 2), difference
        if run >= _TYPED_RUN:
            return True
    return False


def prefixed_token(value: str) -> bool:
    """A token led by its service's prefix that is no stand-in: not filled with one character,
    not a documented example (`dckr_pat_EXAMPLE-EXAMPLE-…`, `vcp_…poEXAMPLE`), not ending its
    shape with a run typed in order (`…7babcdef`, `…GhYZ3JvcVg276543210`, `…Zxxxxxxxxxx`)."""
    return not_stand_in(value) and "EXAMPLE" not in value.upper() and not _typed_run(value)


def looks_random(value: str) -> bool:
    """Letters switching case often (`QZHInDxyXJ`), unlike a name (`userPassword`, `NextToken`)."""
    if "." in value or "(" in value or len(value) < 10:
        return False
    switches = sum(
        1 for a, b in itertools.pairwise(value) if a.isalpha() and b.isalpha() and a.isupper() != b.isupper()
    )
    # A name's words run several lowercase letters (`AWSAccessKeyId`: ccess, ey, d).
    runs = _LOWER_RUN.findall(value)
    return switches >= max(3, len(value) // 4) and sum(map(len, runs)) < 2.5 * len(runs)


def is_code(value: str) -> bool:
    """Code rather than a value: a call, an attribute path, a name, an index."""
    return bool(_CODE.match(value))


def _generated_part(value: str) -> bool:
    """A dotted value with a part no attribute is named like: 20 characters or more, letters and
    digits mixed, varied (a Discord bot token, `MTk4NjIy….Cl2FMQ.ZnCj…`), not `self.config.path`."""
    if "(" in value or "[" in value:
        return False  # a call or an index: code
    for part in value.split("."):
        if len(part) >= 20 and sum(c.isdigit() for c in part) >= 2 and sum(c.isalpha() for c in part) >= 4:
            return entropy(part) >= 3.5
    return False


_ABSOLUTE_PATH = re.compile(r"/[\w.@+-]+(?:/[\w.@+-]*)*")


def secret_value(value: str) -> bool:
    """An unquoted assigned secret: long enough, high entropy; not a reference, a stand-in or code
    (`token = some_call(x)`, `self._token = _app.set(self)`, `password = user.password`)."""
    if is_reference(value) or not 8 <= len(value) <= 4096:
        return False
    # The next parameter of a query string whose value is empty (`?password=&namespace=x`), and
    # a path (`PWD=/repo/project`, `"$PWD":/usr/src/app`: the working directory, no password).
    if value.startswith(("&", "?")) or _ABSOLUTE_PATH.fullmatch(value):
        return False
    # (an index is code too: `token[:-1]`, `auth_info[2]`)
    # (a name's shape is code too, unless its letters switch case as a generated value's do:
    # `YXNkZmZmZmZm_x`, base64 of a word, is no variable)
    if (
        _CODE.match(value)
        and not (any(c.isdigit() for c in value) and not any(c in value for c in ".(["))
        and not looks_random(value)
        and not _generated_part(value)
    ):
        return False
    return entropy(value) >= 3.0 and not value.isalpha()


def service_key(value: str) -> bool:
    """A value under a `…key` name that looks generated (a service's key): 16 characters or more
    with no space, letters and digits mixed (or letters switching case), varied; not a reference,
    a stand-in, a URL, a path, a dotted name or code."""
    if is_reference(value) or not 16 <= len(value) <= 4096 or " " in value or "://" in value:
        return False
    if value.count("|") >= 2 or _VERSIONED.match(value):  # a record's fields, a named version
        return False
    if value.startswith(("/", "./", "~", "$", "%")) or "(" in value or _DOTTED.match(value):
        return False
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    if not ((digits >= 2 and letters >= 4) or looks_random(value)):
        return False
    return entropy(value) >= 3.2


def argument_secret(value: str) -> bool:
    """A call's argument after a secret's name (`setenv("API_TOKEN", "…")`): a secret when it has
    a digit or mixed case, unlike the next name of a list (`("edge-password", "query-secret")`)."""
    if not secret_value(value):
        return False
    return any(c.isdigit() for c in value) or (value.lower() != value and value.upper() != value)


def quoted_secret(value: str) -> bool:
    """A quoted assigned secret (what is between the quotes): spaces, `{ } $` allowed; a
    reference, a stand-in or a sentence is not one."""
    if is_reference(value) or len(value) < 6 or value.startswith(("{{", "${")):
        return False
    if not any(c.isalnum() for c in value):  # `",.:-@*?!"`: punctuation, a separator's list
        return False
    if value[:1] in ";,)" and value[1:2] in (" ", "\t"):
        return False  # code between two strings: `expect "password:"; send "…"`, read from `:"`
    if _SLOT.search(value) and not (len(value) >= 40 and " " not in value and entropy(value) >= 4.5):
        return False  # a format string's slot: `"prefix_{}".format(x)`, `"%s:%s"` (a long random key may hold `%s`)
    if " " in value and (_PROSE.search(value) or value.endswith((":", "..."))):
        return False
    if _CONCATENATION.search(value) and not looks_random(value.strip(" +.")):
        return False  # `'…=' + PASSWORD + '…'`: code building a string
    if _NAME_ONLY.match(value) and not looks_random(value):
        return False  # a name: `"output_token": "NextToken"`, `API_KEY_ENV = "ANTHROPIC_API_KEY"`
    return entropy(value) >= 2.5


def suffixed_secret(value: str) -> bool:
    """A quoted value under a name with words after the secret's (`apikey_myservice: "…"`): a
    secret's look is asked of it (no space, 10 characters or more, a letter and a digit or a
    symbol, varied), not only a quoted one's."""
    if not quoted_secret(value) or " " in value or len(value) < 10 or "%s" in value or "{}" in value:
        return False  # (a format string's slots: `'host:5432:db:%s:%s'`)
    if not any(c.isalpha() for c in value) or (value.isalnum() and not any(c.isdigit() for c in value)):
        return False
    return entropy(value) >= 3.3


def prose_secret(value: str) -> bool:
    """A password written in a sentence: it must look like one (a digit, a symbol or inner
    capitals), since the word after `password is` is usually just a word; 4 to 12 digits are a
    PIN or a numeric password (`my PIN is 4821`), unless every digit is the same."""
    if value.isdigit():
        return 4 <= len(value) <= 12 and len(set(value)) > 1
    value = value.rstrip("\\")  # an escaped newline's backslash, in a tool result's JSON
    if is_reference(value) or value.endswith(":") or len(value) < 6 or value.isalpha() or "(" in value:
        return False
    if "[" in value and value.endswith("]"):
        return False  # a type or a subscript (`pw: Optional[str]`, `password = row[2]`)
    if not (any(c.isdigit() for c in value) or not value.isalnum() or any(c.isupper() for c in value[1:])):
        return False
    return entropy(value) >= 2.3


def url_credentials(value: str) -> bool:
    """A URL's user:password, unless the password is a reference or a stand-in."""
    userinfo = value.split("://", 1)[-1].rsplit("@", 1)[0]
    password = userinfo.split(":", 1)[1] if ":" in userinfo else ""
    return bool(password) and not is_reference(password)


# (and a document's numbered parts: `RFC 7231 section 7.1.1.1.`, `§ 4.2.1.3`)
_VERSION_BEFORE = re.compile(
    r"(?i)(?:\b(?:version|ver|release|build|rev|revision|firmware|v|section|sections|sec|chapter|clause|paragraph"
    r"|para|figure|fig|table|appendix|article|art|step|item)\b\.?|§|==|>=|<=|~=|!=|[A-Za-z]/|[A-Za-z]-"
    # pip's `Requirement already satisfied: … (from …) (9.10.2.21)`: the version installed.
    r"|\)[ \t]*\()\s*[:=]?\s*$"
)
_VERSION_AFTER = re.compile(r"^(?:[-+~]\w|\.(?:dev|post|rc|final)|[ab]\d|rc\d)")  # `1.2.5.1-2` (Debian)


def ip_context(text: str, start: int, end: int) -> bool:
    """Four-part version numbers (`version 1.2.3.4`, `pkg==1.0.0.1`, `Chrome/1.2.3.4`) are not
    addresses."""
    return not (_VERSION_BEFORE.search(text, max(0, start - 20), start) or _VERSION_AFTER.match(text[end : end + 8]))
