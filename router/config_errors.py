"""Where a bad configuration value came from, for the message that names it: the YAML file and
line, or the environment variable that set it; and, for a key no model has, the known key it is
closest to ("did you mean").

`router.settings.load_settings` calls `describe` on a validation error; nothing here reads a
value's content into the message beyond what pydantic already quotes, so no key is printed.
"""

from __future__ import annotations

import difflib
import os
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ValidationError

ENV_PREFIX = "TANDEM_"


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """Every pydantic model an annotation holds (inside dicts, lists, unions, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        if isinstance(argument, type | types.GenericAlias | types.UnionType) or typing.get_origin(argument):
            yield from _models_in(argument)


def _tag_field(model: type[BaseModel], part: int | str) -> str | None:
    """The field of `model` whose only value is `part` (a union's tag: `strategy: Literal["edge"]`)."""
    for name, field in model.model_fields.items():
        if typing.get_origin(field.annotation) is Literal and typing.get_args(field.annotation) == (str(part),):
            return name
    return None


class UnionTag(typing.NamedTuple):
    """Where `parents` passed a union's tag: its position there, the tag's field and value, and the
    union's models (the tagged one among them)."""

    position: int
    field: str
    value: str
    union: frozenset[type[BaseModel]]


def _walk(root: type[BaseModel], parents: tuple[int | str, ...]) -> tuple[set[type[BaseModel]], UnionTag | None]:
    """The models at `parents`, and the last union tag passed on the way. Parts that are no field (a
    dict's key, a list's index) keep the models they are in; a union's tag keeps the tagged model."""
    current: set[type[BaseModel]] = {root}
    tag: UnionTag | None = None
    for index, part in enumerate(parents):
        inner = {
            model
            for holder in current
            if str(part) in holder.model_fields
            for model in _models_in(holder.model_fields[str(part)].annotation)
        }
        if not inner and len(current) > 1:
            tagged = {model: name for model in current if (name := _tag_field(model, part)) is not None}
            if tagged:
                tag = UnionTag(index, next(iter(tagged.values())), str(part), frozenset(current))
                inner = set(tagged)
        current = inner or current
    return current, tag


def keys_at(root: type[BaseModel], parents: tuple[int | str, ...]) -> set[str]:
    """The keys the models at `parents` accept (several models where a union sits there and no tag
    chose one)."""
    current, _ = _walk(root, parents)
    return {name for model in current for name in model.model_fields}


def other_union_member(root: type[BaseModel], loc: tuple[int | str, ...]) -> str | None:
    """For a key written where a union's tag chose a model that lacks it, but other members have
    it (`sees` on an `edge` route): "routes.tandem.sees: not a setting of strategy 'edge' (it
    belongs to: judge, llm_judge)", the path without the tag pydantic adds. None otherwise."""
    if not loc:
        return None
    current, tag = _walk(root, loc[:-1])
    key = str(loc[-1])
    # Only a key written right under the tagged model: deeper, the union's members are not what
    # holds it.
    if tag is None or tag.position != len(loc) - 2 or any(key in model.model_fields for model in current):
        return None
    owners = sorted(
        str(typing.get_args(model.model_fields[tag.field].annotation)[0])
        for model in tag.union
        if key in model.model_fields and tag.field in model.model_fields
    )
    if not owners:
        return None
    path = ".".join(str(part) for index, part in enumerate(loc) if index != tag.position)
    return f"{path}: not a setting of {tag.field} '{tag.value}' (it belongs to: {', '.join(owners)})"


def did_you_mean(key: str, root: type[BaseModel], parents: tuple[int | str, ...] = ()) -> str:
    """' (did you mean max_body_bytes?)' for a near miss among the keys accepted where `key` was
    written, '' when nothing is close."""
    close = difflib.get_close_matches(key, sorted(keys_at(root, parents)), n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


def yaml_line(path: Path, loc: tuple[int | str, ...]) -> int | None:
    """The line of the file where the value at `loc` (or the nearest key above it) is written.
    Parts of `loc` that are not in the file (a union's tag pydantic adds) are skipped."""
    try:
        node = yaml.compose(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    if node is None:
        return None
    line: int | None = None
    for part in loc:
        found: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    found, line = value, key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            found = node.value[part]
            line = found.start_mark.line + 1
        if found is not None:
            node = found
    return line


def env_source(loc: tuple[int | str, ...], environ: Mapping[str, str] | None = None) -> str | None:
    """The TANDEM_… variable that set the value at `loc` (or the section holding it), if one did."""
    environ = os.environ if environ is None else environ
    names = {name.upper() for name in environ if name.upper().startswith(ENV_PREFIX)}
    parts = [str(part) for part in loc]
    for length in range(len(parts), 0, -1):
        name = ENV_PREFIX + "__".join(parts[:length]).upper()
        if name in names:
            return name
    return None


def where(path: Path | None, loc: tuple[int | str, ...]) -> str:
    """' (from the environment variable TANDEM_X)', ' (tandem.yaml:12)', or '' when neither is known."""
    variable = env_source(loc)
    if variable is not None:
        return f" (from the environment variable {variable})"
    line = yaml_line(path, loc) if path is not None and loc else None
    return f" ({path}:{line})" if line is not None else ""


def named_key(message: str) -> tuple[str, ...]:
    """The key a whole-config check's message starts with ('routes.tandem uses …'), as a loc."""
    first = message.split(" ", 1)[0].rstrip(":,")
    if "." not in first and first not in ("unknown_model_route",):
        return ()
    return tuple(first.split("."))


def describe(error: ValidationError, path: Path | None, root: type[BaseModel]) -> str:
    """One line a problem: the key, what is wrong, and where it was set."""
    lines = []
    for item in error.errors():
        loc = tuple(item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        misplaced = other_union_member(root, loc) if item["type"] == "extra_forbidden" else None
        if item["type"] == "extra_forbidden" and loc:
            message = f"unknown key, not permitted here{did_you_mean(str(loc[-1]), root, loc[:-1])}"
        if misplaced is not None:
            lines.append(f"{misplaced}{where(path, loc)}")
        elif loc:
            lines.append(f"{'.'.join(str(part) for part in loc)}: {message}{where(path, loc)}")
        else:
            # A check across keys (a route naming an upstream): its message names the key.
            lines.append(f"{message}{where(path, named_key(message))}")
    if len(lines) == 1:
        return f"invalid configuration: {lines[0]}"
    return "invalid configuration:\n" + "\n".join(f"  {line}" for line in lines)
