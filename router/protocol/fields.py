"""Checks on a client's JSON before it becomes a step: how deep it nests, and the types of the
standard OpenAI chat-completions fields that Tandem forwards (unknown fields are not checked)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from router.errors import GatewayError, bad_request

# How deep a request's JSON may nest (the top-level object is level 1). Deeper is a 400 at parse
# time: the body is re-serialised for the upstream, and orjson refuses more than 254 levels.
MAX_JSON_DEPTH = 128
ORJSON_MAX_DEPTH = 254


def type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    )


SHOWN_CHARS = 64  # of a refused value a message repeats: enough to recognise it


def shown(value: object) -> str:
    """A refused value as a message names it: a string quoted (cut to `SHOWN_CHARS`, saying how
    long it was), anything else by its JSON type, so that a message stays short whatever was sent."""
    if type(value) is not str:
        return type_name(value)
    if len(value) <= SHOWN_CHARS:
        return repr(value)
    return f"{value[:SHOWN_CHARS]!r}… ({len(value)} characters)"


def shown_all(values: Iterable[object], most: int = 5) -> str:
    """Refused values as a message lists them: the first `most` distinct ones (each `shown`),
    then how many more there are."""
    distinct = list(dict.fromkeys(shown(value) for value in values))
    listed = ", ".join(distinct[:most])
    return listed if len(distinct) <= most else f"{listed} and {len(distinct) - most} more"


def got_name(value: object) -> str:
    """What a message says a value it refuses was: its JSON type, or an empty string or array."""
    if value == "":
        return "an empty string"
    if value == []:
        return "an empty array"
    return type_name(value)


def required_problem(label: str, value: object, expected: str) -> str:
    """What is wrong with a required field (`label`: its name as a message writes it) whose
    value `value` is not `expected`: absent (or null), or of another type, said so."""
    if value is None:
        return f"{label} is required and must be {expected}"
    return f"{label} must be {expected}, got {got_name(value)}"


def too_deep(limit: int) -> GatewayError:
    return bad_request(f"request body nests JSON more than {limit} levels deep (max_json_depth)", code="json_too_deep")


class _Wrappers(threading.local):
    """Per thread: lists nested `ORJSON_MAX_DEPTH - limit` deep, to put a request inside."""

    def __init__(self) -> None:
        self.by_limit: dict[int, tuple[list[Any], list[Any]]] = {}


_wrappers = _Wrappers()


def kept_json(value: Any) -> bytes:
    """`orjson.dumps(value)` for bytes that are kept (a message's encoding held from step to
    step). orjson's output keeps the buffer it was written in, about eight times its length
    whatever the size (tracemalloc: 12 KB for 2 KB, 3 MB for 300 KB); a copy costs its length."""
    return bytes(memoryview(orjson.dumps(value)))


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH, body_limit: int | None = None) -> memoryview:
    """Raise a 400 when `value` nests deeper than `limit` levels; else `value` serialised.
    `body_limit`: the body's limit that `limit` stands for, for a part of the body (what the
    error names: the client set that one).

    No Python walk over the request: it is serialised once inside `254 - limit` levels of
    one-item lists, so that orjson's own recursion limit (254) trips exactly when the request
    is deeper than `limit`. One pass in C, about half the cost of parsing the body; its output
    is returned (without the lists), so that a body forwarded unchanged is not serialised again.
    """
    limit = min(limit, ORJSON_MAX_DEPTH)
    wrapper = _wrappers.by_limit.get(limit)
    if wrapper is None:
        outer: list[Any] = [None]
        inner = outer
        for _ in range(ORJSON_MAX_DEPTH - limit - 1):
            inner[0] = [None]
            inner = inner[0]
        wrapper = _wrappers.by_limit[limit] = (outer, inner)
    outer, inner = wrapper
    inner[0] = value
    try:
        out = orjson.dumps(outer if limit < ORJSON_MAX_DEPTH else value)
    except orjson.JSONEncodeError as exc:
        raise too_deep(limit if body_limit is None else body_limit) from exc
    finally:
        inner[0] = None
    lists = ORJSON_MAX_DEPTH - limit if limit < ORJSON_MAX_DEPTH else 0
    return memoryview(out)[lists : len(out) - lists]


def _integer(value: Any) -> bool:
    # An integral float (10.0) is what some clients write for an integer; the upstream takes it.
    return (type(value) is int) or (type(value) is float and value.is_integer())


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


INT64 = 2**63 - 1  # what an upstream's integer fields hold (a seed, a token count)


def _count(value: Any) -> bool:
    return _integer(value) and 1 <= value <= INT64


def _int64(value: Any) -> bool:
    if type(value) is float:
        # An integer past 2**63 is a float once parsed (-9223372036854775809 is -2.0**63): only
        # floats every integer near them is one of are read as the integer the client wrote.
        return value.is_integer() and abs(value) <= 2.0**53
    return type(value) is int and -INT64 - 1 <= value <= INT64


def _between(low: float, high: float, integer: bool = False) -> Callable[[Any], bool]:
    check = _integer if integer else _number
    return lambda value: check(value) and low <= value <= high


def _tool_choice(value: Any) -> bool:
    return value in ("none", "auto", "required") if type(value) is str else type(value) is dict


def _stream_options(value: Any) -> bool:
    # By type, not `in (None, True, False)`: 1 == True and 0 == False in Python, so that test
    # let `"include_usage": 1` (and 0.0) through as booleans.
    if type(value) is not dict:
        return False
    include_usage = value.get("include_usage")
    return include_usage is None or type(include_usage) is bool


def _response_format(value: Any) -> bool:
    return type(value) is dict and type(value.get("type")) is str


def _stop(value: Any) -> bool:
    return type(value) is str or (type(value) is list and all(type(item) is str for item in value))


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _objects(value: Any) -> bool:
    return type(value) is list and all(type(item) is dict for item in value)


def _string_or_object(value: Any) -> bool:
    return type(value) is str or type(value) is dict


def _is(kind: type) -> Callable[[Any], bool]:
    return lambda value: type(value) is kind


_STRING = ("a string", _is(str))
_BOOLEAN = ("a boolean", _is(bool))
_OBJECT = ("an object", _is(dict))
_ARRAY = ("an array", _is(list))

# The request fields of the OpenAI chat-completions API reference, with the type each must have
# when present (null is accepted for all: it means "not set" to the upstream as well).
CHAT_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "audio": _OBJECT,
    "frequency_penalty": ("a number between -2 and 2", _between(-2, 2)),
    "function_call": ("a string or an object", _string_or_object),
    "functions": ("an array of objects", _objects),
    "logit_bias": _OBJECT,
    "logprobs": _BOOLEAN,
    "max_completion_tokens": ("an integer of at least 1", _count),
    "max_tokens": ("an integer of at least 1", _count),
    "metadata": _OBJECT,
    "modalities": ("an array of strings", _strings),
    "n": ("an integer between 1 and 128", _between(1, 128, integer=True)),
    "parallel_tool_calls": _BOOLEAN,
    "prediction": _OBJECT,
    "presence_penalty": ("a number between -2 and 2", _between(-2, 2)),
    "prompt_cache_key": _STRING,
    "reasoning_effort": _STRING,
    "response_format": ("an object with a string 'type'", _response_format),
    "safety_identifier": _STRING,
    "seed": ("a 64-bit integer", _int64),
    "service_tier": _STRING,
    "stop": ("a string or an array of strings", _stop),
    "store": _BOOLEAN,
    "stream": _BOOLEAN,
    "stream_options": ("an object whose 'include_usage' is a boolean", _stream_options),
    "temperature": ("a number between 0 and 2", _between(0, 2)),
    "tool_choice": ('"none", "auto", "required" or an object', _tool_choice),
    "tools": ("an array of objects", _objects),
    "top_logprobs": ("an integer between 0 and 20", _between(0, 20, integer=True)),
    "top_p": ("a number between 0 and 1", _between(0, 1)),
    "user": _STRING,
    "verbosity": _STRING,
    "web_search_options": _OBJECT,
}


# The members checked of the object fields above (each: what it must be, whether it must be
# there): a wrong one is named itself (`stream_options.include_usage`), not as its object.
CHAT_MEMBERS: dict[str, dict[str, tuple[str, Callable[[Any], bool], bool]]] = {
    "stream_options": {"include_usage": ("a boolean", _is(bool), False)},
    "response_format": {"type": ("a string", _is(str), True)},
}


def _got(value: Any, expected: str) -> str:
    """What a message says a refused value was: its type, a number or a short string itself."""
    got = type_name(value)
    if got == "array" and expected.startswith("an array"):
        return "an array with an item of another type"
    if _number(value):
        return orjson.dumps(value).decode()
    if type(value) is str and len(value) <= 40:
        return f"the string {orjson.dumps(value).decode()}"
    return got


def _member_problem(key: str, value: dict[str, Any]) -> tuple[str, str] | None:
    """(the member's path, what is wrong with it) for the first wrong member of the object
    field `key`, or None."""
    for member, (expected, valid, required) in CHAT_MEMBERS.get(key, {}).items():
        given = value.get(member)
        path = f"{key}.{member}"
        if given is None:
            if required:
                return path, required_problem(f"'{path}'", None, expected)
        elif not valid(given):
            return path, f"'{path}' must be {expected}, got {_got(given, expected)}"
    return None


def check_fields(raw: dict[str, Any]) -> None:
    """Raise a 400 naming the first standard field (or member of one) whose value has the
    wrong type."""
    for key, value in raw.items():
        rule = CHAT_FIELDS.get(key)
        if rule is None or value is None:
            continue
        expected, valid = rule
        if not valid(value):
            if type(value) is dict:
                member = _member_problem(key, value)
                if member is not None:
                    raise bad_request(member[1], param=member[0])
            raise bad_request(f"'{key}' must be {expected}, got {_got(value, expected)}", param=key)


# -- the translated surfaces (`/v1/messages`, `/v1/responses`) -----------------------------------
# A mistyped field there is the client's mistake too (`stream: "yes"` must not stream).

# What each kind accepts; bool is not a number here, though Python says it is.
KINDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "bool": ("a boolean", (bool,)),
    "int": ("an integer", (int,)),
    "count": ("an integer of at least 1", (int,)),
    "natural": ("an integer of at least 0", (int,)),
    "budget": ("an integer of at least 1024", (int,)),
    "top_logprobs": ("an integer between 0 and 20", (int,)),
    "number": ("a number", (int, float)),
    "unit": ("a number between 0 and 1", (int, float)),
    "temperature": ("a number between 0 and 2", (int, float)),
    "string": ("a string", (str,)),
    "name": ("a non-empty string", (str,)),
    "object": ("an object", (dict,)),
    "array": ("an array", (list,)),
    "objects": ("an array of objects", (list,)),
    "strings": ("an array of strings", (list,)),
    "string|array": ("a string or an array", (str, list)),
    "string|objects": ("a string or an array of objects", (str, list)),
    "string|object": ("a string or an object", (str, dict)),
}
# What a kind asks beyond its type: a range, or the items of an array.
_WITHIN: dict[str, Callable[[Any], bool]] = {
    "count": lambda value: 1 <= value <= INT64,
    "natural": lambda value: 0 <= value <= INT64,
    "budget": lambda value: 1024 <= value <= INT64,
    "top_logprobs": lambda value: 0 <= value <= 20,
    "int": lambda value: -INT64 - 1 <= value <= INT64,
    "unit": lambda value: 0 <= value <= 1,
    "temperature": lambda value: 0 <= value <= 2,
    "name": lambda value: value != "",
    "objects": lambda value: all(type(item) is dict for item in value),
    "strings": lambda value: all(type(item) is str for item in value),
    "string|objects": lambda value: type(value) is str or all(type(item) is dict for item in value),
}

# A field's kind: a key of KINDS, or the strings it may be (an enumeration).
Kind = str | frozenset[str]


def one_of(*values: str) -> frozenset[str]:
    return frozenset(values)


def check(
    body: dict[str, Any], fields: dict[str, Kind], required: frozenset[str] = frozenset(), where: str = ""
) -> None:
    """Each present, non-null field must be of its kind (`fields`: name -> kind); those in
    `required` must be present too, whenever their parent is. A name reaches into objects
    (`tool_choice.type`, a member of the object `tool_choice`) and arrays (`tools[].name`, a
    member of each tool): a parent is listed, and so checked, before its members, and members of
    a parent of another type are not looked for. `where`: the path of `body` in the request,
    when it is not the request (`tools[0].`), before the paths named."""
    for name, kind in fields.items():
        if "." not in name:  # most are the request's own: no walk
            _check_value(body.get(name), name, kind, required, where, ())
            continue
        array, _, member = name.partition("[].")
        if member and "." not in array and "." not in member:
            # A member of each item of an array (`tools[].name`, run for every tool of every
            # request): a loop, without the walk's generators.
            _check_members(body.get(array), member, name, kind, required, where)
            continue
        for value, indices in _reached(body, name):
            _check_value(value, name, kind, required, where, indices)


def _check_members(items: Any, member: str, name: str, kind: Kind, required: frozenset[str], where: str) -> None:
    if type(items) is not list:
        return
    wanted = name in required
    # The usual case, a value of its kind's type with no range, seen without a call.
    plain = KINDS[kind][1] if isinstance(kind, str) and kind not in _WITHIN else ()
    for index, item in enumerate(items):
        if type(item) is dict:
            value = item.get(member)
            if type(value) in plain or (value is None and not wanted):
                continue
            _check_value(value, name, kind, required, where, (index,))


def _check_value(
    value: Any, name: str, kind: Kind, required: frozenset[str], where: str, indices: tuple[int, ...]
) -> None:
    """A 400 when `value`, of the field `name` (at `indices` in its arrays), is not of `kind`;
    its path is written only then (this runs for every member of every tool)."""
    if value is None:
        if name in required:
            path = _path(where, name, indices)
            raise bad_request(required_problem(_label(path), None, _words(kind)), param=path)
        return
    problem = kind_problem(value, kind)
    if problem is not None:
        path = _path(where, name, indices)
        raise bad_request(f"{_label(path)} must be {_words(kind)}, got {problem}", param=path)


def _reached(holder: dict[str, Any], name: str) -> Iterator[tuple[Any, tuple[int, ...]]]:
    """The value (or None) of each field `name` names in `holder`, and its indices in the
    arrays on the way (`tools[].name`: the tool's)."""
    head, _, rest = name.partition(".")
    value = holder.get(head.removesuffix("[]"))
    if not rest:
        yield value, ()
    elif head.endswith("[]"):
        for index, item in enumerate(value if type(value) is list else ()):
            if type(item) is dict:
                for found, indices in _reached(item, rest):
                    yield found, (index, *indices)
    elif type(value) is dict:
        yield from _reached(value, rest)


def _path(where: str, name: str, indices: tuple[int, ...]) -> str:
    """`name` with each `[]` given its index (`tools[].name`, (2,) -> `tools[2].name`)."""
    pieces = name.split("[]")
    path = pieces[0] + "".join(f"[{index}]{piece}" for index, piece in zip(indices, pieces[1:], strict=True))
    return where + path


def _label(path: str) -> str:
    """A path as a message writes it: quoted at the top level ('max_tokens'), as paths inside
    the request are not (messages[0].content)."""
    return f"'{path}'" if "." not in path and "[" not in path else path


def _words(kind: Kind) -> str:
    if isinstance(kind, frozenset):
        return "one of " + ", ".join(repr(value) for value in sorted(kind))
    return KINDS[kind][0]


def kind_problem(value: Any, kind: Kind) -> str | None:
    """What a refused (non-null) value was, as a message ends it ("got …"), or None when it is of
    its kind."""
    if isinstance(kind, frozenset):
        if type(value) is not str:
            return type_name(value)
        return None if value in kind else f"{value[:40]!r}"
    types = KINDS[kind][1]
    # By type: `True` is an int to isinstance (and equals 1), not a number to a client.
    if type(value) not in types:
        return got_name(value)
    within = _WITHIN.get(kind)
    if within is not None and not within(value):
        if _number(value):
            return orjson.dumps(value).decode()
        return "an empty string" if value == "" else "an array with an item of another type"
    return None


def required_string(item: dict[str, Any], key: str, where: str) -> str:
    """`item[key]` as the non-empty string it must be (an id that ties a call to its result);
    else a 400 naming it."""
    value = string_field(item, key, where)
    if not value:
        raise bad_request(f"{where}.{key} is required (a non-empty string)", param=f"{where}.{key}")
    return value


def string_field(item: dict[str, Any], key: str, where: str) -> str:
    """`item[key]` as the string it must be ("" when absent or null); else a 400 naming it
    (`where` is the item's path in the request, e.g. `messages[2].content[0]`)."""
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad_request(f"{where}.{key} must be a string, got {type_name(value)}", param=f"{where}.{key}")
    return value


def calls_problem(calls: Any, where: str) -> tuple[str, str] | None:
    """What is wrong with an assistant message's `tool_calls` (a request's or an answer's), as
    (the field's path, a message naming it); None when what the gateway reads of them (to
    stitch, judge, redact and account) has the API's types."""
    if not isinstance(calls, list):
        return where, f"{where} must be an array of tool calls, got {type_name(calls)}"
    for number, call in enumerate(calls):
        at = f"{where}[{number}]"
        if not isinstance(call, dict):
            return at, f"{at} must be an object, got {type_name(call)}"
        for key in ("id", "type"):
            if call.get(key) is not None and not isinstance(call[key], str):
                return f"{at}.{key}", f"{at}.{key} must be a string, got {type_name(call[key])}"
        function = call.get("function")
        if function is None:
            continue
        if not isinstance(function, dict):
            return f"{at}.function", f"{at}.function must be an object, got {type_name(function)}"
        for key in ("name", "arguments"):
            if function.get(key) is not None and not isinstance(function[key], str):
                path = f"{at}.function.{key}"
                return path, f"{path} must be a string, got {type_name(function[key])}"
    return None
