"""Bounds on the JSON values one request makes the gateway parse.

A body is parsed on the event loop, and what a parse costs is the values it makes, not its
bytes: 14 MB of `[[]]` repeated (millions of small lists) took ~2 s and hundreds of MB, holding
every other request, and 16 MB of `"a",` ~0.4 s, where 16 MB of text parses in milliseconds.
Agents' bodies hold a few thousand arrays and objects and some thousands of values (messages,
content parts, tool calls, tools' schemas) however long their texts, so bounds far above that
refuse only such bodies, before they are parsed: past them a parse would take ~35 ms (arrays
and objects, the dearest values) and ~0.1 s (values of any kind).

Counting is not free: `bytes.count` reads ~2.4 GB/s, so the rough count of a 400 KB agent body
(~0.38 ms) cost more than its parse (~0.26 ms). So only bodies of `COUNT_FROM` bytes or more are
counted: a smaller one cannot hold the gateway long whatever it holds (1 MiB of `[]` parses in
~0.15 s), and agents' bodies, up to a few hundred KB a step, never pay. Above it the brackets and
commas in its bytes, strings included, bound the counts from above; only past those bounds are
strings set aside for exact counts. A trajectory's next body is parsed from its last
(router/protocol/prefix.py), so only its new part is counted: the bounds are on what one request
makes the gateway parse.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from router.errors import GatewayError, bad_request

MAX_JSON_CONTAINERS = 100_000
MAX_JSON_VALUES = 1_000_000
COUNT_FROM = 1 << 20

# Outside JSON strings there are no quotes: once escapes are removed, a quote opens or closes a
# string, alternately.
_STRING = re.compile(rb'"[^"]*"')


class Counts(NamedTuple):
    containers: int  # arrays and objects
    values: int  # arrays and objects, and the commas between items and members: a value more each


def counts(data: bytes) -> Counts:
    """The arrays and objects, and the values, in the JSON text `data`, strings set aside."""
    # Escapes removed, pairs of backslashes first: `\\"` ends a string, `\"` does not.
    plain = _STRING.sub(b"", data.replace(b"\\\\", b"").replace(b'\\"', b""))
    containers = plain.count(b"[") + plain.count(b"{")
    return Counts(containers, containers + plain.count(b","))


def check_containers(
    data: bytes,
    max_containers: int = MAX_JSON_CONTAINERS,
    max_values: int = MAX_JSON_VALUES,
    count_from: int = COUNT_FROM,
) -> None:
    """Refuse (400) JSON text of `count_from` bytes or more holding more than `max_containers`
    arrays and objects or more than `max_values` values, before it is parsed."""
    if len(data) < max(count_from, 2 * min(max_containers, max_values)):
        return
    rough_containers = data.count(b"[") + data.count(b"{")
    rough_values = rough_containers + data.count(b",") if len(data) >= 2 * max_values else 0
    if rough_containers <= max_containers and rough_values <= max_values:
        return
    exact = counts(data)
    if exact.containers > max_containers:
        raise _too_many(f"{exact.containers:,} JSON arrays and objects", max_containers)
    if exact.values > max_values:
        raise _too_many(f"{exact.values:,} JSON values", max_values)


def _too_many(held: str, limit: int) -> GatewayError:
    return bad_request(
        f"request body holds {held}, over the limit of {limit:,} a request (chat requests hold a few "
        "thousand); send long content as strings",
        code="json_too_many_values",
    )
