"""Detection time grows linearly with the text, on inputs built to make a scanner do more than
one pass: one long line of base64, a run of digits, `a=` and `:` repeated, a CSV under a
`phone` header, tables whose rows name columns themselves (`Ann,cell` under `name,phone`),
SQL INSERTs, many short lines, prose dense with names and streets, and the later rules' cores
repeated with no value after them (OAuth `state=`, `password to`, table rows, `NickServ
identify`, a password's word in German, kin words, a quotation's `says`, lower-case lists,
BibTeX's `author`, `git shortlog` under an `Authors` heading, `Secret(`, `New value:`, devices'
`key` lines, Junos' `$9$`, deployment commands' names and pipes, plist keys, `altool`, wallets'
cues).

Each input is timed at two sizes four times apart; the larger may cost at most 8x the smaller
(linear gives ~4x, quadratic ~16x). Ratios, not absolute times: the test holds on a loaded
machine. Each size is timed in CPU time, over enough calls for ~20 ms, three times and the best
kept, so neither a descheduling nor the clock's grain decides.
"""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from router.privacy import opt_in
from router.privacy.detect import detect_uncached
from router.privacy.taken import Taken

SMALL = 64 * 1024
LARGE = 4 * SMALL
MAX_RATIO = 8.0


def _base64(size: int) -> str:
    data = random.Random(size).randbytes(size * 3 // 4 + 3)
    return base64.b64encode(data).decode()[:size]


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


def _rows(header: str, row: Callable[[int], str]) -> Callable[[int], str]:
    def make(size: int) -> str:
        lines, total, index = [header], len(header), 0
        while total < size:
            line = row(index)
            lines.append(line)
            total += len(line) + 1
            index += 1
        return "\n".join(lines)

    return make


INPUTS: dict[str, Callable[[int], str]] = {
    "base64-line": _base64,
    "base64-wrapped": lambda size: "\n".join(_base64(size)[i : i + 76] for i in range(0, size, 76)),
    "digits": _repeat("1234567890"),
    "a-equals": _repeat("a="),
    "colons": _repeat(":"),
    # Rows numbered from 1000: every row holds a 4-digit number at both sizes (a postcode to the
    # address finder's multi-line rule), so the two sizes are the same kind of text.
    "phone-csv": _rows("name,phone,email", lambda i: f"Ann {1000 + i},+1 415 555 {i % 10000:04d},a{i}@example.com"),
    # Every row looks like a header naming a phone column: read once as rows of the first table.
    "rows-naming-columns": _rows("name,phone", lambda _i: "Ann,cell"),
    "markdown-rows-naming-columns": _rows("| name | mobile |", lambda _i: "| Ann | fax |"),
    "sql-insert": lambda size: "INSERT INTO t (name, phone) VALUES " + "('Ann Lee', '4155552671'),\n" * (size // 28),
    "short-lines": _rows("log", lambda i: f"k{i}: v"),
    "people-prose": _rows("", lambda i: f"Dear John Smith, Mrs. Ann Lee lives at {i} Main Street, Springfield"),
    # One token of query parameters: every `state=` an OAuth code's candidate, no `code=` after
    # it (unbounded, each candidate was read to the token's end: minutes a MB).
    "oauth-states": _repeat("?state=x&b=yyyyyyyyyyyyyyyyyyyy"),
    "password-to": _repeat("password to "),
    "password-rows": _repeat("| password | "),
    "nickserv": _repeat("NickServ identify "),
    "other-languages": _repeat("Das Passwort ist "),
    "kin": _repeat("Ana's daughter and my kid "),
    "quoted-by": _repeat('," says Ana ," said '),
    "lower-list": _repeat(": ana, kofi, noor, "),
    "author-fields": _repeat("author = {Lima, Ana and "),
    # Counts from 1000 for the same reason: a 4-digit count is a postcode's candidate.
    "shortlog": _rows("# Authors", lambda i: f"  {1000 + i}\tAna Lima"),
    "secret-calls": _repeat('Secret(value="x'),
    "new-value": _rows("password reset", lambda _i: "New value: "),
    "device-keys": _rows("radius server A", lambda _i: " key neighbor a password key-string "),
    "junos-secrets": _repeat('"$9$abcdefgh'),
    "flat-commas": _repeat("Flat 1, a, "),
    "cyrillic-houses": _repeat("ул. Тверская, д. 1 "),
    "map-queries": _repeat("?query=1+Oak+"),
    "env-sets": _repeat("env:set API_KEY "),
    "piped-secrets": _repeat("echo x | vercel env add "),
    "named-values": _repeat("--name db-token "),
    "altool-flags": _repeat("altool -u x "),
    "plist-keys": _repeat("<key>API_SECRET</key><string>"),
    "acl-setusers": _repeat("ACL SETUSER a on "),
    "set-passwords": _repeat("SET PASSWORD FOR a "),
    "admins-sections": _repeat("[admins]\nadmin\n"),
    # This round's cores: HTML-escaped quotes (the escape view), wrapped and printed secrets,
    # calls, declared defaults, connection strings, names in mail and code.
    "html-entities": _repeat("&quot;password&quot;: &quot;"),
    "password-inputs": _repeat('<input type="password" value="'),
    "block-scalars": _rows("auth:", lambda _i: "  token: |"),
    "table-cells": _repeat("| `TOKEN` | `"),
    "printed-commands": _rows("$ echo $DB_PASSWORD", lambda _i: "$ pass show a b"),
    "declared-defaults": _rows("Parameters:", lambda _i: "  DBPassword:\n    Default: "),
    "positional-calls": _repeat(".connect('h', 22, 'u', "),
    "connect-using": _repeat("CONNECT TO a USER b USING "),
    "keyed-values": _repeat("<Key>Password</Key><Value "),
    "offices": _repeat("President Senator Doctor King "),
    "salutations": _rows("", lambda _i: "Anna,"),
    "copyrights": _repeat("Copyright (c) 2024 Ana "),
    # Wallets' cues with no key after them: a keypair's array begun, dumpwallet's `# addr=`, a
    # seed phrase's notice, an extended key's prefix.
    "keypair-arrays": _repeat("keypair id.json [1,2,3,"),
    "wallet-dump-lines": _repeat("L1aW4aubDFB7yfras2S1mN3bqg9 2024-02-11T09:13:55Z reserve=1 # addr="),
    "phrase-notices": _repeat("seed phrase:\nabandon ability "),
    "extended-prefixes": _repeat("xprv9s21ZrQH143K"),
    # Bank details' labels before digits that are no value: the cores hold the first digits.
    "account-digits": _repeat("account number 123456 routing 1234567 "),
    "card-codes": _repeat("card cvv 12 security code 12 "),
    "bank-columns": _rows("routing_number,account_number,cvv", lambda i: f"{i},{i},{i}"),
}

FINDERS: dict[str, Callable[[str], object]] = {
    "default": detect_uncached,
    "person": lambda text: opt_in.find(text, frozenset({"person"})),
    "address": lambda text: opt_in.find(text, frozenset({"address"})),
}


def _best(call: Callable[[], object], loops: int = 1) -> float:
    """The best of three per-call CPU times over `loops` calls: CPU time, because on a loaded
    machine a scan of a millisecond or two loses whole time slices to other processes on the
    wall clock (the ratio then says nothing about the scan)."""
    times = []
    for _ in range(3):
        started = time.process_time()
        for _ in range(loops):
            call()
        times.append((time.process_time() - started) / loops)
    return min(times)


def _loops(call: Callable[[], object]) -> int:
    """Calls enough for ~20 ms of CPU time a measurement: a one-millisecond scan timed once is
    mostly the clock's and the scheduler's noise."""
    started = time.process_time()
    call()
    once = time.process_time() - started
    return max(1, min(50, int(0.02 / max(once, 1e-4))))


@pytest.mark.parametrize("finder", sorted(FINDERS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_detection_time_is_linear(name: str, finder: str) -> None:
    find = FINDERS[finder]
    small, large = INPUTS[name](SMALL), INPUTS[name](LARGE)
    find(small[:4096])  # compiled databases and name lists are loaded outside the timing
    loops = _loops(lambda: find(small))

    def measure() -> tuple[float, float, float]:
        small_time = _best(lambda: find(small), loops)
        large_time = _best(lambda: find(large), max(1, loops // 4))
        # Below a fifth of a millisecond the ratio is the clock's grain: a floor keeps it meaningful.
        return small_time, large_time, large_time / max(small_time, 0.0002)

    small_time, large_time, ratio = measure()
    if ratio >= MAX_RATIO:
        # A second measurement before failing: on a loaded two-core machine another process can
        # evict the caches through every one of the large size's few calls; a quadratic scan
        # stays quadratic when measured again.
        small_time, large_time, ratio = min(measure(), (small_time, large_time, ratio), key=lambda m: m[2])
    assert ratio < MAX_RATIO, (
        f"{name} ({finder}): {small_time * 1000:.1f} ms -> {large_time * 1000:.1f} ms, x{ratio:.1f}"
    )


def test_spans_kept_out_of_order_stay_linear() -> None:
    """Names are kept longest first, so their spans arrive out of order: keeping one must not
    move every kept span after it."""

    def keep(count: int) -> float:
        taken = Taken()
        started = time.perf_counter()
        for index in reversed(range(count)):
            assert taken.take(index * 10, index * 10 + 5)
        elapsed = time.perf_counter() - started
        assert taken.overlaps(12, 13) and not taken.overlaps(6, 9)
        return elapsed

    small = min(keep(40_000) for _ in range(3))
    large = min(keep(160_000) for _ in range(3))
    assert large / max(small, 0.001) < MAX_RATIO, (small, large)


# Texts of one short piece repeated where each repeat is a candidate whose match reaches far:
# a secret's name with no value (`pwd=pwd=…`: each name's match read the same 4 KB of value
# again), digits in pairs (each pair a phone's candidate, checked), BEGIN lines with no END
# (each read its whole window). Linear before, but 560 to 4,700 times the cost of source code.
REPEATED = ("pwd=", "key=", "token=", "passwd ", "12 ", "-----BEGIN PRIVATE KEY-----", 'password="')
# Now 5 to 240 times (compiled or not: digits in pairs the most, each pair still checked once
# its match is passed whole); the bound leaves room for a loaded machine.
MAX_COST_RATIO = 400.0


@pytest.mark.parametrize("unit", REPEATED)
def test_a_repeated_candidate_costs_a_bounded_multiple_of_source_code(unit: str) -> None:
    source = (Path(__file__).parents[1] / "router" / "protocol" / "chat.py").read_text()
    reference, text = _repeat(source)(SMALL), _repeat(unit)(SMALL)
    detect_uncached(text[:4096])
    reference_time = _best(lambda: detect_uncached(reference), _loops(lambda: detect_uncached(reference)))
    cost = _best(lambda: detect_uncached(text))
    ratio = cost / max(reference_time, 0.0002)
    assert ratio < MAX_COST_RATIO, (
        f"{unit!r}: {cost * 1000:.1f} ms against {reference_time * 1000:.2f} ms, x{ratio:.0f}"
    )
