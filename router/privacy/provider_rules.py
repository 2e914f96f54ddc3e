"""Provider secret rules (gitleaks' published rule data, see secret_rules.py) as detectors.

Hyperscan runs every rule's own regex in the one pass (without tracking where matches start,
which is what makes 200 regexes cheap); Python's `re` then finds the match in the window that
ends there (searched from where a match may begin, and without gitleaks' generic lead before the
keyword: heads.py) and applies the secret group, the entropy floor and allowlists, the rule's keywords
(gitleaks applies a rule only where one occurs) and the global references (`${VAR}`, `{{ x }}`)
Tandem never treats as secrets.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from router.privacy import validators
from router.privacy.detector import Detector
from router.privacy.heads import first_strings, without_lead
from router.privacy.secret_rules import RULES

# A match is at most this long (gitleaks' generic template starts up to 50 characters before its
# keyword; values run up to a few hundred characters after it).
_SPAN = 640
_NEAR = 64
# The standard library's regex parser (it measures a pattern's widths; typeshed does not list it).
_PARSER: Any = importlib.import_module("re._parser")


def _span(regex: str) -> int:
    """How far before its end a match of `regex` may begin, in bytes: the rule's longest match
    as hyperscan runs it (one byte an atom), at most `_SPAN`. A window of 640 characters for a
    rule whose matches are ~110 long (`sk_live_…`) was searched for its first strings across
    ~700 characters at each candidate: ~30 µs a candidate."""
    longest = int(_PARSER.parse(regex.encode()).getwidth()[1])
    return min(_SPAN, longest)


def _validator(entropy: float, allow: tuple[str, ...], stop: tuple[str, ...]) -> Callable[[str], bool]:
    allowed = [re.compile(expression) for expression in allow]
    stops = tuple(word.lower() for word in stop)

    def valid(value: str) -> bool:
        if not value or validators.entropy(value) < entropy:
            return False
        if any(expression.search(value) for expression in allowed):
            return False
        lowered = value.lower()
        if any(word in lowered for word in stops):
            return False
        return not validators.is_reference(value)

    return valid


def _near_keyword(keywords: tuple[str, ...]) -> Callable[[str, int, int], bool]:
    """Gitleaks applies a rule only where one of its keywords occurs; some rules' regexes can
    match without one (`sourcegraph-access-token` takes any 40 hex digits), so a value stands
    only with a keyword within reach, on either scanning path."""
    pattern = re.compile("(?i)" + "|".join(re.escape(k) for k in keywords))
    lowered = tuple(k.lower() for k in keywords)
    ascii_keywords = all(k.isascii() for k in keywords)

    def near(text: str, start: int, end: int) -> bool:
        low, high = max(0, start - _NEAR), end + _NEAR
        window = text[low:high]
        if ascii_keywords and window.isascii():
            # The same answer as the caseless pattern (on ASCII text case folding is `lower`),
            # from substring searches: `re` tried the pattern at each of the window's ~700
            # characters, folding each, for every window of a provider rule.
            window = window.lower()
            return any(keyword in window for keyword in lowered)
        return bool(pattern.search(text, low, high))

    return near


# Rules Tandem's own detectors do better: gitleaks' `kubernetes-secret-yaml` takes any entry of a
# Secret's `data:` (usernames and certificates too, with its name); encoded.py decodes each value
# and keeps those whose text holds a secret.
_SUPERSEDED = frozenset({"kubernetes-secret-yaml"})


def _first_group(group: int) -> Callable[[re.Match[str]], tuple[int, int]]:
    """The secret group's span, or where it took no part in the match (a rule of several
    alternatives, each with its own group: `curl -H "Authorization: Token …"`), the first group
    that did, as gitleaks takes the first non-empty group of a rule that names none."""

    def span(match: re.Match[str]) -> tuple[int, int]:
        found = match.span(group)
        if found[0] >= 0:
            return found
        for index in range(1, (match.re.groups or 0) + 1):
            found = match.span(index)
            if found[0] >= 0 and found[1] > found[0]:
                return found
        return (0, 0)  # an empty value: no finding

    return span


def detectors() -> tuple[Detector, ...]:
    out = []
    for rule_id, kind, regex, keywords, group, entropy, allow, stop in RULES:
        if rule_id in _SUPERSEDED:
            continue
        pattern = re.compile(without_lead(regex))
        out.append(
            Detector(
                kind,
                pattern,
                regex.encode(),
                validate=_validator(entropy, allow, stop),
                group=group,
                value_span=_first_group(group) if pattern.groups > 1 else None,
                reach=0,  # hyperscan reports where the whole match ends
                rule=rule_id,
                check=(near := _near_keyword(keywords)),
                gate=near,
                keyword_core=_span(regex),
                skip_to=first_strings(without_lead(regex)),
            )
        )
    return tuple(out)
