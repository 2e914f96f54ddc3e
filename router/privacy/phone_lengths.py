"""Phone candidates' validity told from libphonenumber's own metadata, without parsing.

Parsing and validating a candidate costs ~20-50 µs, and a national candidate is tried in each
region that may hold it. For a plain candidate (digits and separators only), the national
significant number the parser would keep is known from the metadata alone: the digits after the
calling code (`+44…`), less the national prefix where the region's prefix pattern matches and
taking it off leaves a number of the region's shape and length. Its validity is then the
metadata's test (`general_desc`, the number types, the region by leading digits): `decide`.
Where that cannot be told here (letters or an extension, a `+` with a region, an international
dialling prefix, the region's own calling code written in front, a transforming national prefix
rule, non-geographic numbers), `decide` answers None and libphonenumber is asked, unless
`may_be_valid` shows no leftover digits could have a length and a type of the calling code.

Everything is read from the installed `phonenumbers` metadata, never written by hand, so an
update of it is followed. `tests/test_phone_lengths.py` holds both to libphonenumber's answers
on every region's example numbers in every format and on random digit strings.
"""

from __future__ import annotations

import re

import phonenumbers
from phonenumbers.phonemetadata import PhoneMetadata, PhoneNumberDesc

# Candidates made only of ASCII digits and the separators libphonenumber skips without meaning
# (no letters, so no extension and no vanity number; at most a leading `+`).
_PLAIN = re.compile(r"\+?[0-9 ().\-/]+")
_NOT_DIGIT = re.compile(r"[^0-9]")
# A plain number then an extension written with `x` (`(415) 555-2671 x204`).
_WITH_EXTENSION = re.compile(r"(\+?[0-9 ().\-/]*[0-9]) ?x ?[0-9]{1,6}")
_LONGEST_CALLING_CODE = 3
# The number types `is_valid_number` accepts (one must match besides the general description).
_TYPES = (
    "premium_rate",
    "toll_free",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
    "fixed_line",
    "mobile",
)

# Per calling code and length of a national significant number: one pattern, the alternation of
# every number type's pattern (of every region of the calling code) that allows that length in a
# region whose general description allows it too. A number no pattern matches has no type there.
_TYPED: dict[int, dict[int, re.Pattern[str]]] = {}
_ANY_LENGTH = -1
# A region's national prefix pattern, or None when it transforms what it matches (the parser
# may then lengthen the number: left to it).
_Prefix = re.Pattern[str] | None
_REGION: dict[str, tuple[PhoneMetadata | None, re.Pattern[str] | None]] = {}
_PREFIXES: dict[str, tuple[bool, _Prefix]] = {}


def _metadata(calling_code: int, region: str) -> PhoneMetadata | None:
    return PhoneMetadata.metadata_for_region_or_calling_code(calling_code, region)


def _lengths(general: PhoneNumberDesc, desc: PhoneNumberDesc) -> set[int]:
    """The lengths a number of this type may have: its own and its region's (an empty list
    allows any length)."""
    own, region = set(desc.possible_length), set(general.possible_length)
    if own and region:
        return own & region
    return own or region or {_ANY_LENGTH}


def _typed(calling_code: int) -> dict[int, re.Pattern[str]]:
    if calling_code not in _TYPED:
        parts: dict[int, list[str]] = {}
        for region in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(calling_code, ()):
            metadata = _metadata(calling_code, region)
            general = metadata.general_desc if metadata is not None else None
            if metadata is None or general is None or not general.national_number_pattern:
                continue  # no number of this region matches its general description
            for name in _TYPES:
                desc: PhoneNumberDesc | None = getattr(metadata, name)
                if desc is None or not desc.national_number_pattern:
                    continue
                for length in _lengths(general, desc):
                    parts.setdefault(length, []).append(desc.national_number_pattern)
        _TYPED[calling_code] = {n: re.compile("|".join(f"(?:{p})" for p in ps)) for n, ps in parts.items()}
    return _TYPED[calling_code]


def _region(region: str) -> tuple[PhoneMetadata | None, re.Pattern[str] | None]:
    """A region's metadata and international dialling prefix (`00`, `011`)."""
    if region not in _REGION:
        metadata = PhoneMetadata.metadata_for_region(region, None)
        idd = metadata.international_prefix if metadata is not None else None
        _REGION[region] = (metadata, re.compile(idd) if idd else None)
    return _REGION[region]


def _prefix(metadata: PhoneMetadata) -> tuple[bool, _Prefix]:
    """(whether this module may decide, the national prefix pattern or None for none)."""
    key = f"{metadata.id}/{metadata.country_code}"
    if key not in _PREFIXES:
        if metadata.national_prefix_transform_rule:
            _PREFIXES[key] = (False, None)
        else:
            pattern = metadata.national_prefix_for_parsing
            _PREFIXES[key] = (True, re.compile(pattern) if pattern else None)
    return _PREFIXES[key]


def _stripped(digits: str, prefix: _Prefix) -> tuple[str, ...]:
    """What the parser may keep of `digits`: all of them, or what follows its national prefix."""
    match = prefix.match(digits) if prefix is not None else None
    return (digits, digits[match.end() :]) if match else (digits,)


def _some_number(nationals: set[str] | tuple[str, ...], calling_code: int) -> bool:
    """Whether one of `nationals` may have a type in a region of the calling code."""
    typed = _typed(calling_code)
    anywhere = typed.get(_ANY_LENGTH)
    for national in nationals:
        pattern = typed.get(len(national))
        if (pattern is not None and pattern.fullmatch(national)) or (
            anywhere is not None and anywhere.fullmatch(national)
        ):
            return True
    return False


def _called(digits: str) -> tuple[int, int, PhoneMetadata | None] | None:
    """The calling code the digits after a `+` begin with (the parser's reading: the shortest
    known one), its length and its metadata; None when they begin with none."""
    for size in range(1, min(len(digits), _LONGEST_CALLING_CODE) + 1):
        calling_code = int(digits[:size])
        if calling_code in phonenumbers.COUNTRY_CODE_TO_REGION_CODE:
            return calling_code, size, _metadata(calling_code, phonenumbers.region_code_for_country_code(calling_code))
    return None


def may_be_valid(number: str, region: str | None) -> bool:
    """False only when `phonenumbers.is_valid_number(phonenumbers.parse(number, region))` is
    certainly False (or `parse` raises); True when it may be True."""
    if not _PLAIN.fullmatch(number):
        return True
    digits = _NOT_DIGIT.sub("", number)
    if number.startswith("+"):
        if region is not None or digits.startswith("0"):
            return True  # left to the parser (a `+` with a region, or no calling code at all)
        called = _called(digits)
        if called is None:
            return False  # no calling code: parse raises
        calling_code, size, metadata = called
        if metadata is None:
            return True
        decides, prefix = _prefix(metadata)
        return not decides or _some_number(_stripped(digits[size:], prefix), calling_code)
    metadata, idd = _region(region) if region is not None else (None, None)
    if metadata is None:
        return True
    if idd is not None and (dialled := idd.match(digits)):
        rest = digits[dialled.end() :]  # as written with a `+` (see `decide`)
        return True if rest[:1] in ("", "0") else may_be_valid("+" + rest, None)
    decides, prefix = _prefix(metadata)
    if not decides:
        return True
    code = metadata.country_code
    if code is None:
        return True
    nationals = set(_stripped(digits, prefix))
    own_code = str(code)
    if digits.startswith(own_code):
        # The parser may read the region's own calling code off the front and a national prefix
        # after it, then (in `parse`) a national prefix again, with the calling code's main
        # region's pattern.
        main = _metadata(code, phonenumbers.region_code_for_country_code(code))
        main_decides, main_prefix = _prefix(main) if main is not None else (False, None)
        if not main_decides:
            return True
        for rest in _stripped(digits[len(own_code) :], prefix):
            nationals.update(_stripped(rest, prefix))
            nationals.update(_stripped(rest, main_prefix))
    return _some_number(nationals, code)


# A number description's test, compiled once: (the lengths it lists, or None for any; its
# pattern). A description without a pattern matches nothing and is left out.
_Test = tuple[frozenset[int] | None, re.Pattern[str]]
# A region's type test: its general description, then the types `is_valid_number` accepts, in
# its order (the special types, fixed lines, then mobiles where they differ from fixed lines).
_TypeTest = tuple[_Test, tuple[_Test, ...]] | None
_PATTERNS: dict[str, re.Pattern[str]] = {}
# Per calling code: each region's leading digits (None: none) and type test, in the metadata's
# order, built once from the metadata (reading it per candidate cost more than the tests).
_CODE_REGIONS: dict[int, tuple[tuple[re.Pattern[str] | None, _TypeTest], ...]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _PATTERNS:
        _PATTERNS[pattern] = re.compile(pattern)
    return _PATTERNS[pattern]


def _test(desc: PhoneNumberDesc | None) -> _Test | None:
    if desc is None or not desc.national_number_pattern:
        return None
    return (frozenset(desc.possible_length) or None, _compiled(desc.national_number_pattern))


def _type_test(metadata: PhoneMetadata) -> _TypeTest:
    general = _test(metadata.general_desc)
    if general is None:
        return None  # no number matches the region's general description
    names = _TYPES if not metadata.same_mobile_and_fixed_line_pattern else _TYPES[:-1]
    types = tuple(test for name in names if (test := _test(getattr(metadata, name))) is not None)
    return general, types


def _passes(national: str, test: _Test) -> bool:
    """A number description's test: the length (when it lists any) and the whole pattern."""
    lengths, pattern = test
    return (lengths is None or len(national) in lengths) and pattern.fullmatch(national) is not None


def _has_type(national: str, test: _TypeTest) -> bool:
    """Whether the number has a type in the region (its general description first)."""
    if test is None or not _passes(national, test[0]):
        return False
    return any(_passes(national, type_test) for type_test in test[1])


def _code_regions(calling_code: int) -> tuple[tuple[re.Pattern[str] | None, _TypeTest], ...]:
    if calling_code not in _CODE_REGIONS:
        entries = []
        for region in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(calling_code, ()):
            metadata = PhoneMetadata.metadata_for_region(region, None)
            if metadata is None:
                continue
            leading = _compiled(metadata.leading_digits) if metadata.leading_digits is not None else None
            entries.append((leading, _type_test(metadata)))
        _CODE_REGIONS[calling_code] = tuple(entries)
    return _CODE_REGIONS[calling_code]


# What `_exact` reads of a region's metadata, read once: its calling code, national prefix
# pattern, general pattern, possible lengths (sorted and as a set), local-only lengths, and
# whether the prefix rule transforms what it matches (the parser's to read where it matches).
_Plan = tuple[int, _Prefix, re.Pattern[str] | None, tuple[int, ...], frozenset[int], frozenset[int], bool]
# Keyed by the metadata's region and calling code; None where the parser must read the number
# (no calling code or lengths, non-geographic numbers under the code).
_PLANS: dict[tuple[str | None, int | None], _Plan | None] = {}


def _plan(metadata: PhoneMetadata) -> _Plan | None:
    key = (metadata.id, metadata.country_code)
    if key not in _PLANS:
        code, general = metadata.country_code, metadata.general_desc
        plan: _Plan | None = None
        if (
            code is not None
            and general is not None
            and general.possible_length
            and "001" not in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(code, ())
        ):
            for_parsing = metadata.national_prefix_for_parsing
            prefix = _compiled(for_parsing) if for_parsing else None
            transforms = bool(metadata.national_prefix_transform_rule) and prefix is not None
            pattern = _compiled(general.national_number_pattern) if general.national_number_pattern else None
            lengths = tuple(sorted(general.possible_length))
            local = frozenset(general.possible_length_local_only)
            plan = (code, prefix, pattern, lengths, frozenset(lengths), local, transforms)
        _PLANS[key] = plan
    return _PLANS[key]


def _kept(digits: str, plan: _Plan) -> str:
    """The national significant number the parser keeps of `digits` in a region without a
    transforming prefix rule: what follows the national prefix, unless taking it off turns a
    number of the region's general shape into one that is not, or leaves a length the region
    does not list (too short, local only or between its lengths)."""
    _code, prefix, pattern, lengths, length_set, local, _transforms = plan
    match = prefix.match(digits) if prefix is not None else None
    if match is None:
        return digits
    stripped = digits[match.end() :]
    if pattern is not None and pattern.fullmatch(digits) and not pattern.fullmatch(stripped):
        return digits
    if len(stripped) in local or len(stripped) < lengths[0]:
        return digits
    if len(stripped) > lengths[-1] or len(stripped) in length_set:
        return stripped
    return digits


def _valid_in(national: str, calling_code: int) -> bool:
    """`is_valid_number` for a national significant number of the calling code: the region it
    belongs to (by leading digits, else the first where it has a type), and a type there."""
    if not _some_number((national,), calling_code):
        return False  # no type of any region of the calling code takes it (one test, not one a region)
    for leading, test in _code_regions(calling_code):
        if leading is not None:
            if leading.match(national):
                return _has_type(national, test)
        elif _has_type(national, test):
            return True
    return False


def _exact(metadata: PhoneMetadata, digits: str) -> bool | None:
    """Validity of `digits` (no calling code nor dialling prefix left) parsed with `metadata`,
    or None where it cannot be told here."""
    plan = _plan(metadata)
    if plan is None or len(digits) < 3:
        return None
    if plan[6] and plan[1] is not None and plan[1].match(digits):
        return None  # a transforming prefix rule applies (where it does not, it changes nothing)
    national = _kept(digits, plan)
    if not 2 <= len(national) <= 17:
        return False  # parse raises
    return _valid_in(national, plan[0])


def decide(number: str, region: str | None) -> bool | None:
    """`phonenumbers.is_valid_number(phonenumbers.parse(number, region))` (False where `parse`
    raises) for plain candidates (and those with an ` x123` extension), told from the metadata
    without parsing; None when the parser must read it (other letters, a `+` with a region, a 0
    after a dialling prefix, the region's own calling code in front, a transforming prefix rule
    that applies)."""
    if not _PLAIN.fullmatch(number):
        extended = _WITH_EXTENSION.fullmatch(number)
        if extended is None or len(_NOT_DIGIT.sub("", extended[1])) < 3:
            return None
        # The parser takes an ` x123` extension off a number of three digits or more (whose
        # validity does not depend on it) and reads the rest as that number alone.
        return decide(extended[1], region)
    digits = _NOT_DIGIT.sub("", number)
    if number.startswith("+"):
        if region is not None or digits.startswith("0") or len(digits) <= 2:
            return None
        called = _called(digits)
        if called is None:
            return False  # no calling code: parse raises
        _, size, metadata = called
        return _exact(metadata, digits[size:]) if metadata is not None else None
    metadata, idd = _region(region) if region is not None else (None, None)
    if metadata is None:
        return None
    if idd is not None and (dialled := idd.match(digits)):
        # The parser takes an international dialling prefix (`00`, `011`) off unless a 0
        # follows it (no calling code begins with 0), then reads the rest as written after a
        # `+`: its validity is that number's, whatever the region.
        rest = digits[dialled.end() :]
        return None if rest[:1] in ("", "0") else decide("+" + rest, None)
    if metadata.country_code is None or digits.startswith(str(metadata.country_code)):
        return None if may_be_valid(number, region) else False
    return _exact(metadata, digits)
