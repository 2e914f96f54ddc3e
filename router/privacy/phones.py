"""Phone numbers: candidates by shape, validity from libphonenumber's metadata (`phonenumbers`),
and context rules so that dates, timestamps, ids and amounts are not phones.

- International (`+44 20 7946 0958`, `0044…`, `001-415-…`): valid for the country it names.
- National with separators (`(415) 555-2671`, `020 7946 0958`, `06 12 34 56 78`): valid in one
  of the regions below, and not shaped like a date, a time or a grouped amount, nor laid out as a
  dump's cells or a table's columns (`od` rows, a memory listing's lines).
- National without separators (`4155552671`): only beside a phone word or label.
"""

from __future__ import annotations

import functools
import re

import phonenumbers

from router.privacy.label_window import LabelWindow
from router.privacy.phone_lengths import decide

# The regions whose national formats are recognised without a country code.
REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "IN", "CN", "JP", "BR")
# Beside a phone word a national number may also be from these regions.
LABELLED_REGIONS = (*REGIONS, "CA", "AU", "NL", "SE", "FI", "PL", "KR", "MX", "PT", "BE", "CH", "AT", "IE", "RU")
# National numbers start with the trunk prefix 0 in these regions (Italy keeps its 0; India,
# China and Brazil write mobiles without it too): a number's first digit rules out the others.
_TRUNK_ZERO = {"GB", "DE", "FR", "IT", "IN", "CN", "JP", "BR", "AU", "NL", "SE", "FI", "KR", "BE", "CH", "AT", "IE"}
_NO_TRUNK = {"US", "CA", "ES", "IT", "IN", "CN", "BR", "PT", "PL", "MX", "RU"}


def _national(value: str, first_digit: str, regions: tuple[str, ...]) -> bool:
    plausible = _TRUNK_ZERO if first_digit == "0" else _NO_TRUNK
    return any(_valid(value, region) for region in regions if region in plausible)


_LABEL_WORDS = (
    "tel",
    "telephone",
    "telefon",
    "telefono",
    "teléfono",
    "téléphone",
    "telefone",
    "telf",
    "tfno",
    "phone",
    "mobile",
    "mobil",
    "mob",
    "cell",
    "cellphone",
    "cellular",
    "fax",
    "call",
    "contact",
    "whatsapp",
    "sms",
    "handy",
    "portable",
    "móvil",
    "movil",
    "celular",
    "cellulare",
    "numéro",
    "numero",
    "número",
    "nummer",
    "puhelin",
    "telepono",
    "cep no",
    "cep tel",
    "cep telefonu",
    "hotline",
    "ph",
    "電話",
    "电话",
    "手机",
    "携帯",
    "전화",
    # Hindi: phone, mobile, telephone, number (`मेरा फोन नंबर 9834257234 है`), as written with the
    # nukta and without.
    "फोन",
    "फ़ोन",
    "मोबाइल",
    "दूरभाष",
    "नंबर",
    "नम्बर",
    "☎",
    "📞",
)
_LABEL = re.compile(
    "(?i)(?<![A-Za-z])(?:" + "|".join(re.escape(w) for w in _LABEL_WORDS) + r")(?![A-Za-z])[^\n\d+(]{0,16}$"
)
# Words that name a phone only as a field (`Desk: …`, a business card's lines name phones by
# where they ring) or in the phrases of `_SAID` (`reach me at`, `my registered number`).
_FIELD_ONLY = ("desk", "direct", "office", "landline", "switchboard")
_SAID_ONLY = ("reach", "answering", "reachable", "registered")
# Hyperscan core of the labelled detector (caseless literals; see detect.py).
_CORE_WORDS = _LABEL_WORDS + _FIELD_ONLY + _SAID_ONLY
LABEL_CORE = (
    b"(?i)(?:\\b(?:"
    + b"|".join(re.escape(w).encode() for w in _CORE_WORDS if w.isascii())
    + b")\\b|"
    + b"|".join(re.escape(w).encode() for w in _CORE_WORDS if not w.isascii())
    + b")"
)  # ASCII words whole: `sin` is not in `using`
LABEL_SPAN = max(len(w.encode()) for w in _CORE_WORDS)
# (And a part's or a product's number: `Part number: 555-123-4567-A`, `Model 415-555-2671`.)
_NOT_PHONE_BEFORE = re.compile(
    r"(?i)(?:\b(?:id|ids|order|invoice|ref|build|version|ver|pid|port|uid|gid|ticket|account|acct|no|nr|sku"
    r"|serial|size|bytes|ms|ns|epoch|timestamp|ts|seq|offset|commit|issue|pr|job|run|step"
    r"|(?:part|model|product|item|catalog(?:ue)?|article|mpn|upc|ean)(?:[ _-]?(?:number|num|no|nr|code|id))?)\b"
    r"|[#=@$€£¥%])[\s:#=.]{0,3}$"
)
# How far back it is read: the longest phrase and its separators (`catalogue number: `).
_NOT_PHONE_SPAN = 24
# `line` before a number is a source line's or a log's (`see line 120 450 789`), but before a
# number written as North American phones are (`Main line 415-555-2671`, `hot line (415) 555-2671`)
# it is a telephone line: that shape is no line number.
_LINE_BEFORE = re.compile(r"(?i)\bline[\s:#=.]{0,3}$")
_NANP_SHAPE = re.compile(r"^(?:1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}([ .-]))\d{3}(?(1)\1|[ .-])\d{4}$")
# A letter code after a hyphen (`555-123-4567-A`, `…-B2`) makes the number a part's, not a phone's
# (a word there names a phone: `(37) 788-063-Office`).
_CODE_AFTER = re.compile(r"-(?:[A-Z]{1,2}|[A-Z]\d{1,3})(?![A-Za-z0-9])")
# After a colon a number is a phone only where the word before the colon names one (`Office:`,
# `电话：`, `Tel.:`) or a phone URI's scheme does (`tel:+44…`): `uid:4155552671`, `ERROR:…` are none.
_SCHEME = re.compile(r"(?i)(?<![A-Za-z])(?:whatsapp|tel|sms|callto):$")
_DATE = re.compile(r"^(?:\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4})$")
_EXTENSION = re.compile(r"\s?(?:x|ext\.?|#)\s?\d{1,6}$")
_NOT_DIGIT = re.compile(r"\D")
# An SSN, an IPv4 address, a range of years (`2012-2022`): never phones.
_SSN_SHAPE = re.compile(r"^\d{3}-\d{2}-\d{4}$|^\d{1,3}(?:\.\d{1,3}){3}$|^(?:19|20)\d\d ?[-–] ?(?:19|20)\d\d$")
# Unlabelled, these shapes are something else: a US ZIP+4, a Brazilian CEP (`01310-200`), table
# columns split by runs of spaces.
_NOT_PLAIN = re.compile(r"^\d{5}-\d{4}$|^\d{5}-\d{3}$|\s\s")
# A range of ports (`49152-65535`, `30000-32767`): two port numbers, the lower first.
_RANGE = re.compile(r"^(\d{4,5})-(\d{4,5})$")


def _port_range(value: str) -> bool:
    found = _RANGE.match(value)
    return found is not None and int(found.group(1)) <= int(found.group(2)) <= 65535


# A decimal number (`26.391834` in coordinates) is no phone, labelled or not.
# (A kernel log's clock, `[ 1234.567890]`, too: four to six digits, no trunk 0, then a point.)
_DECIMAL = re.compile(r"^(?:\d{1,3}|[1-9]\d{3,5})\.\d{4,}$")
# The tail of a longer chain of digit groups (an account number, a bad IBAN) is not a phone.
# ... nor the rest of an international number that failed (`+46 (0)39 88 01 60`).
_CHAIN_BEFORE = re.compile(r"(?:\d[ .-]{1,4}|\b[A-Z0-9]{4} |\(0\) ?|\+\d{1,3} ?)$")
# An amount: grouped by commas or dots, a round one, or grouped by spaces (`1,250,000`, `250 000`,
# `72 128 827`); a phone field's value may be the last, not the first two (`_FIELD_AMOUNT`).
_MARKED_AMOUNT = r"^\d{1,3}(?:[.,]\d{3})+$|^\d{1,3}(?: \d{3})* 000(?: \d{3})*$"
_GROUPED_AMOUNT = re.compile(_MARKED_AMOUNT + r"|^\d{1,2}(?: \d{3})+$")


# Unlabelled, these groupings are log fields, not a country's phone format: a first group of six
# digits or more (`081109 203615 148`: a date and a time), four groups of four or five and four
# without a trunk 0 (rows of numbers), an IPv4 address written with dashes (`82-68-222-194.dsl…`).
# Nor are groups of four with a shorter tail (`1234 5678 90`: how cards and accounts are
# printed), an SSN's groups with a longer tail (`123-45-67890`: an SSN mistyped), or a list of
# scores or ranges (`5-15 15-11 15-11`).
# Nor two to four digits with no trunk 0 and then six (`deposit 144 000004`, `16 000150`: an
# address and a word of a memory listing): none of the regions read unlabelled writes its
# numbers so (an area code there has a trunk 0 before it, or the local part is not six digits:
# `(415) 555-2671`, `138 0013 8000`, `98765 43210`); beside a phone word such a number stands.
_NOT_PHONE_GROUPS = re.compile(
    r"^\d{6,}[ .-]|^[1-9]\d{3} \d{4} \d{4}$|^[1-9]\d{4} \d{4}$"
    r"|^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:-(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$"
    r"|^[1-9]\d{3} \d{4} \d{1,3}$|^\d{3}-\d{2}-\d{5,}$|^\d{1,2}-\d{1,2}(?: \d{1,2}-\d{1,2})+$"
    r"|^[1-9]\d{1,3}[ .-]\d{6}$"
)
# A host name goes on after the number (`195-154-37-122.rev.example.eu`).
_HOST_AFTER = re.compile(r"\.[A-Za-z]")


def valid_in_column(value: str) -> bool:
    """Whether a cell under a phone column's header is a phone number (the header is its label)."""
    for scheme in ("whatsapp:", "tel:", "sms:"):
        value = value.removeprefix(scheme)
    digits = _NOT_DIGIT.sub("", _EXTENSION.sub("", value))
    if not 7 <= len(digits) <= 15 or _DATE.match(value) or _DECIMAL.match(value):
        return False
    if value.startswith("+"):
        return _valid(value.replace("(0)", ""), None)
    if value.startswith("00") and _valid("+" + digits[2:], None):
        return True
    return _national(value, digits[0], LABELLED_REGIONS)


# Seven digits (with anything between): every phone holds as many (see `_value_facts`).
_SEVEN_DIGITS = re.compile(r"\d(?:\D*\d){6}")


def digits_within(text: str, low: int, high: int) -> bool:
    """Whether text[low:high] holds the seven digits a phone needs: the window a phone word
    opens (`call`, `contact`, `cell` are frequent in code and logs) is skipped without them."""
    return _SEVEN_DIGITS.search(text, low, high) is not None


def slash_within(text: str, low: int, high: int) -> bool:
    """Whether text[low:high] holds a slash and seven digits: the slashed phone's window."""
    return text.find("/", low, high) >= 0 and digits_within(text, low, high)


_LABEL_WINDOW = LabelWindow(_LABEL_WORDS, _LABEL)


def _label_before(text: str, start: int) -> bool:
    return _LABEL_WINDOW.before(text, max(0, start - 40), start)


# A phone field (`Phone: 467 3395`, `"mobile": "…"`, `Tel.:` with the value on the next line, as
# on a business card or a CV) holds a phone number even where no numbering plan known here says
# so: a local number without its area code, a number in a range not issued yet. Only the words
# that name such a field, right before its value:
# `call` and `contact` begin sentences; the words for "number" name order and account numbers.
_NOT_FIELDS = ("call", "contact", "numéro", "numero", "número", "nummer", "नंबर", "नम्बर", "sms")
# A line a signature or a contact page names by what it reaches (`Support line:`, `Main line:`;
# `Direct line:` and `Office line:` are a field word and `line`).
_LINE_FIELDS = ("support line", "main line", "help line", "service line", "sales line", "emergency line")
_FIELD_WORDS = tuple(word for word in _LABEL_WORDS if word not in _NOT_FIELDS) + _FIELD_ONLY + _LINE_FIELDS
_FIELD = re.compile(
    "(?i)(?<![A-Za-z])(?:" + "|".join(re.escape(w) for w in _FIELD_WORDS) + r")(?:[ _-]?(?:number|num|no|nr|line))?"
    r"\.?[\"']?[ \t]*[:=][ \t]*[\"']?(?:\r?\n[ \t]*)?$"
)
_FIELD_WINDOW = LabelWindow(_FIELD_WORDS, _FIELD)


# A sentence that says a phone number follows (`call me at`, `they're not answering at`, `my
# mobile number is`, `my registered number`; not `registered 1234567 users`): what follows is
# one as a field's value is.
_SAID_WORDS = ("call", "text", "ring", "whatsapp", "phone", "mobile", "cell", *_SAID_ONLY, "नंबर", "नम्बर")
_SAID = re.compile(
    r"(?i)(?<![A-Za-z])(?:(?:call|text|reach|ring|whatsapp|phone)[ \t]+(?:me|us|him|her|them)[ \t]+(?:at|on)"
    r"|(?:answering|reachable)[ \t]+(?:at|on)"
    r"|(?:phone|mobile|cell)(?:[ \t]+number)?[ \t]+(?:is|was)"
    r"|(?:my|your|his|her|our|their)[ \t]+registered(?:[ \t]+(?:phone|mobile|cell))?(?:[ \t]+number)?"
    # Hindi puts the verb after the number (`मेरा फोन नंबर 26741570 है`): "phone number" says it.
    r"|(?:फोन|फ़ोन|मोबाइल)[ \t]+(?:नंबर|नम्बर)"
    # Chinese, Japanese and Korean: "(my) phone number is" (`我的电话号是…`, `電話番号は…`, `전화번호는…`).
    r"|(?:电话|電話|手机|手機|携帯)(?:号码|號碼|号|號|番号|番號)?[ \t]*(?:是|为|為|は)"
    r"|(?:전화|휴대폰|핸드폰)[ \t]*(?:번호)?(?:는|은))[ \t]*:?[ \t]*$"
)
_SAID_WINDOW = LabelWindow(_SAID_WORDS, _SAID)


def _phone_digits(value: str) -> str | None:
    """The digits of a candidate whose count and shape a phone may have (7 to 15, not a date, an
    SSN's shape, an IPv4 address or a decimal number), else None."""
    digits = _NOT_DIGIT.sub("", _EXTENSION.sub("", value))
    if not 7 <= len(digits) <= 15 or _DATE.match(value) or _SSN_SHAPE.match(value) or _DECIMAL.match(value):
        return None
    return digits


# A phone named by the word after it, at the end of its line or item, as a signature's or a
# contact card's lines name theirs (`416 60 039 office`, `+1 984 182 0190 (mobile)`,
# `(37) 788-063-Office`); not one that a sentence goes on after (`12 345 678 office chairs`).
_WORD_AFTER = re.compile(
    r"(?i)[ \t]*(?:[-(/][ \t]*)?(?:office|fax|mobile|cell|home|work|direct|tel|phone|landline|whatsapp)"
    r"(?:[ \t]*\))?[ \t]*(?:$|[\r\n,;|\\])",
    re.MULTILINE,
)
# An amount as a field's value may hold one (`Phone: 1,250,000` in a report): grouped by commas
# or dots, or a round one. Grouped by spaces it is a phone there (`Phone: 72 128 827`).
_FIELD_AMOUNT = re.compile(_MARKED_AMOUNT)


def _in_field(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is the value of a phone field, follows words that say a phone
    number does or is named by the word after it: 7 to 15 digits shaped as a number is written,
    not a date, an IP address or an amount; after a `+`, a country's calling code."""
    low = max(0, start - 32)
    if not (
        _FIELD_WINDOW.before(text, low, start)
        or _SAID_WINDOW.before(text, low, start)
        # (not the tail of a chain of digits, or of a `+CC` that failed: `+999 412 8831 mobile`)
        or (_WORD_AFTER.match(text, end) and not _CHAIN_BEFORE.search(text, max(0, start - 6), start))
    ):
        return False
    value = text[start:end]
    digits = _phone_digits(value)
    if digits is None or _FIELD_AMOUNT.match(value) or _HOST_AFTER.match(text, end):
        return False
    if value.startswith(("+", "(+")):
        return any(int(digits[:size]) in phonenumbers.COUNTRY_CODE_TO_REGION_CODE for size in (1, 2, 3))
    return True


@functools.lru_cache(maxsize=8192)  # the same numbers recur across a trajectory's steps
def _valid(number: str, region: str | None) -> bool:
    decided = decide(number, region)  # plain candidates, told from the metadata without parsing
    if decided is not None:
        return decided
    try:
        parsed = phonenumbers.parse(number, region)
    except phonenumbers.NumberParseException:
        return False
    return bool(phonenumbers.is_valid_number(parsed))


@functools.lru_cache(maxsize=8192)  # value-dense text repeats its candidates (overlapping windows)
def _value_facts(value: str) -> bool | tuple[str, bool, bool, bool]:
    """What a candidate's own characters decide: a verdict (international numbers, shapes that
    are never phones), else its digits, whether it is separated, whether it is a valid `00`/`011`
    dial-out number and whether its shape may stand unlabelled (context decides the rest)."""
    digits = _phone_digits(value)
    if digits is None:
        return False
    bare = _EXTENSION.sub("", value)
    if value.startswith("(+"):  # `(+358) 401439147`
        value = "+" + value[2:].replace(")", "", 1)
    if value.startswith("+"):
        # `+44 (0)20 …`: the trunk 0 in brackets is not dialled from abroad; the extension is kept.
        return _valid(value.replace("(0)", ""), None)
    separated = len(digits) != len(bare)
    # `00`/`011` then a country code, unless it is the tail of a row of numbers (`081110 011352 5321`).
    dial_out = bool(
        value.startswith(("00", "011"))
        and not _NOT_PHONE_GROUPS.match(value)
        and _valid("+" + digits[2 if value.startswith("00") else 3 :], None)
    )
    plain_shape = not (
        _GROUPED_AMOUNT.match(value) or _NOT_PLAIN.search(value) or _NOT_PHONE_GROUPS.match(value) or _port_range(value)
    )
    return digits, separated, dial_out, plain_shape


@functools.lru_cache(maxsize=8192)
def _national_cached(value: str, first_digit: str, regions: tuple[str, ...]) -> bool:
    return _national(value, first_digit, regions)


def _named_before_colon(text: str, start: int) -> bool:
    """Whether the colon right before `start` ends a phone URI's scheme or a phone's or a phone
    field's name (the pattern lets a candidate begin after a colon only where a letter precedes it)."""
    low = max(0, start - 40)
    return bool(
        _SCHEME.search(text, max(0, start - 9), start)
        or _label_before(text, start)
        or _FIELD_WINDOW.before(text, low, start)
    )


_SLASH = re.compile(r"[ \t]*/[ \t]*")


def check_slashed(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], a number with a slash after its area code (`0176/12345678`,
    `+49 176/12345678`, `030 / 1234567`: German, Austrian and Swiss lines write them so), is a
    phone: beside a phone word or in a phone field (a slash parts dates, fractions and paths
    too), and valid for the country it names, else in one of the labelled regions."""
    if start and text[start - 1] == ":" and not _named_before_colon(text, start):
        return False
    if not (_label_before(text, start) or _FIELD_WINDOW.before(text, max(0, start - 32), start)):
        return False
    value = _SLASH.sub(" ", text[start:end])
    digits = _phone_digits(value)
    if digits is None:
        return False
    if value.startswith("+"):
        return _valid(value.replace("(0)", ""), None)
    if value.startswith("00"):
        return _valid("+" + digits[2:], None)
    return _national_cached(value, digits[0], LABELLED_REGIONS)


# A hex or octal dump's row: an offset column (six hex digits or more, one a digit: `od`,
# `hexdump`, `xxd`'s `00000010:`, a debugger's `0x7ffe…:`) then eight cells or more, each two to
# four hex digits or one character, maybe escaped (`07 01 26 04 1e 00 3c 02 14 01 …`, `od -c`'s
# `226   %  \0  \n 001 211`), or a line of bytes alone (`od -An`): eight hex pairs or more, a
# letter among them, or sixteen. Its digit groups are bytes and words (`02 14 01 00 00 00 00` is
# valid for Germany). The text column after the cells (`|…|`, or xxd's) is not a cell: a phone
# printed there stays one.
_DUMP_CELL = r"[ \t]+(?:[0-9A-Fa-f]{2,4}|\\?[^\s|])(?!\S)"
_DUMP_OFFSET = re.compile(rf"[ \t]*(?:0x)?(?=[0-9A-Fa-f]*\d)[0-9A-Fa-f]{{6,16}}:?(?:{_DUMP_CELL}){{8,}}")
_DUMP_BYTES = re.compile(r"[ \t]*(?:[0-9A-Fa-f]{2}[ \t]+){7,}[0-9A-Fa-f]{2}[ \t]*\r?$")
_HEX_LETTER = re.compile(r"[A-Fa-f]")
# The longest line read around a candidate (a dump's row or a listing's line is far shorter; a
# longer line, minified JSON or a log's, is neither, and is not read again per candidate).
_LINE_SPAN = 200


def _line(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The bounds of the line holding text[start:end], or None when it is longer than `_LINE_SPAN`
    on either side."""
    low = max(0, start - _LINE_SPAN)
    line_start = text.rfind("\n", low, start) + 1
    if line_start == 0 and low > 0:
        return None
    line_end = text.find("\n", end, end + _LINE_SPAN)
    if line_end < 0:
        if end + _LINE_SPAN < len(text):
            return None
        line_end = len(text)
    return line_start, line_end


def _in_dump_row(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is among the cells of a hex or octal dump's row (`_DUMP_OFFSET`,
    `_DUMP_BYTES`)."""
    bounds = _line(text, start, end)
    if bounds is None:
        return False
    row = _DUMP_OFFSET.match(text, *bounds)
    if row is not None:
        return end <= row.end()
    row = _DUMP_BYTES.match(text, *bounds)
    return row is not None and (
        _HEX_LETTER.search(text, *bounds) is not None or len(text[bounds[0] : bounds[1]].split()) >= 16
    )


# A line's shape: its digit runs as one digit, its blanks as one space (`sim> deposit 1734 020027`
# and `sim> deposit 36 000004` are one shape).
_DIGIT_RUN = re.compile(r"\d+")
_BLANKS = re.compile(r"[ \t\r]+")
# Two numbers side by side on each line of a run of lines of one shape are a table's columns (a
# memory listing, `deposit 1734 020027` line after line, an assembler's addresses and words), not
# a phone on each line: three lines or more, the same words on each (a letter among them: a list
# of bare numbers may be a list of phones). Numbers written in three groups or more, as phones
# mostly are (`dialing 020 7946 0958` in a log), are left to the other rules.
_RUN = 3
_TWO_GROUPS = re.compile(r"^\(?\d+\)?[ .-]{1,2}\d+$")


def _shape_of(text: str, start: int, end: int) -> str:
    return _BLANKS.sub(" ", _DIGIT_RUN.sub("0", text[start:end])).strip()


def _in_columns(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], two groups of digits, stands on a line of a run of `_RUN` lines
    or more of one shape with a letter in it (`_RUN`)."""
    bounds = _line(text, start, end)
    if bounds is None:
        return False
    shape = _shape_of(text, *bounds)
    if not any(c.isalpha() for c in shape):
        return False
    same = 1
    # The lines before, then the lines after, while they have the candidate's line's shape.
    # (A neighbour longer than `_LINE_SPAN` has another shape.)
    at = bounds[0]
    while same < _RUN and at > 0:
        low = max(0, at - 1 - _LINE_SPAN)
        line_start = text.rfind("\n", low, at - 1) + 1
        if (line_start == 0 and low > 0) or _shape_of(text, line_start, at - 1) != shape:
            break
        same += 1
        at = line_start
    at = bounds[1]
    while same < _RUN and at < len(text):
        line_end = text.find("\n", at + 1, at + 1 + _LINE_SPAN)
        if line_end < 0:
            if at + 1 + _LINE_SPAN < len(text):
                break
            line_end = len(text)
        if _shape_of(text, at + 1, line_end) != shape:
            break
        same += 1
        at = line_end
    return same >= _RUN


def _laid_out(text: str, start: int, end: int, value: str) -> bool:
    """Whether an unlabelled candidate is laid out as a dump's cells or a table's columns
    (`_in_dump_row`, `_in_columns`): read last, for the few candidates every other rule took."""
    return _in_dump_row(text, start, end) or (_TWO_GROUPS.match(value) is not None and _in_columns(text, start, end))


def _plain_context(text: str, start: int, value: str) -> bool:
    """No id's or part's word right before the value, nor the digits of a longer chain."""
    return not (
        _NOT_PHONE_BEFORE.search(text, max(0, start - _NOT_PHONE_SPAN), start)
        or _CHAIN_BEFORE.search(text, max(0, start - 6), start)
        or (_LINE_BEFORE.search(text, max(0, start - 8), start) and not _NANP_SHAPE.match(value))
    )


def check(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], a phone-shaped candidate, is a phone number in its context.
    What the value alone decides is cached by value; the context rules run only where needed."""
    if start and text[start - 1] == ":" and not _named_before_colon(text, start):
        return False
    if end < len(text) and text[end] == "-" and _CODE_AFTER.match(text, end):
        return False
    value = text[start:end]
    facts = _value_facts(value)
    if isinstance(facts, bool):
        return facts or _in_field(text, start, end)
    digits, separated, dial_out, plain_shape = facts
    # (The context before it is read only for the shapes that stand without a label.)
    if dial_out and _plain_context(text, start, value) and not _in_dump_row(text, start, end):
        return True
    if (
        separated
        and len(digits) >= 8
        and plain_shape
        and not _HOST_AFTER.match(text, end)
        and _plain_context(text, start, value)
        and _national_cached(value, digits[0], REGIONS)
        and not _laid_out(text, start, end, value)
    ):
        return True
    # Unseparated, short, or after an id-like word: a phone only beside a phone word or label.
    if _label_before(text, start) and _national_cached(value, digits[0], LABELLED_REGIONS):
        return True
    return _in_field(text, start, end)
