"""Type checks for the fields of the translated surfaces (`/v1/messages`, `/v1/responses`): a
mistyped field is the client's mistake and gets a 400 naming it, never a guess (`stream: "yes"`
must not stream). Unknown fields are left alone."""

from __future__ import annotations

from typing import Any

from router.errors import bad_request

# What each kind accepts; bool is not a number here, though Python says it is.
KINDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "bool": ("a boolean", (bool,)),
    "int": ("an integer", (int,)),
    "number": ("a number", (int, float)),
    "string": ("a string", (str,)),
    "object": ("an object", (dict,)),
    "array": ("an array", (list,)),
    "string|array": ("a string or an array", (str, list)),
    "string|object": ("a string or an object", (str, dict)),
}


def type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}.get(type(value), type(value).__name__)


def check(body: dict[str, Any], fields: dict[str, str]) -> None:
    """Each present, non-null field must be of its kind (`fields`: name -> a key of KINDS)."""
    for name, kind in fields.items():
        value = body.get(name)
        if value is None:
            continue
        words, types = KINDS[kind]
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            raise bad_request(f"'{name}' must be {words}, got {type_name(value)}", param=name)
