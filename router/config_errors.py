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
from typing import Any

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


def keys_at(root: type[BaseModel], parents: tuple[int | str, ...]) -> set[str]:
    """The keys the models at `parents` accept (several models where a union sits there). Parts
    that are no field (a dict's key, a list's index, a union's tag) keep the models they are in."""
    current: set[type[BaseModel]] = {root}
    for part in parents:
        inner = {
            model
            for holder in current
            if str(part) in holder.model_fields
            for model in _models_in(holder.model_fields[str(part)].annotation)
        }
        current = inner or current
    return {name for model in current for name in model.model_fields}


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
        if item["type"] == "extra_forbidden" and loc:
            message = f"unknown key, not permitted here{did_you_mean(str(loc[-1]), root, loc[:-1])}"
        if loc:
            lines.append(f"{'.'.join(str(part) for part in loc)}: {message}{where(path, loc)}")
        else:
            # A check across keys (a route naming an upstream): its message names the key.
            lines.append(f"{message}{where(path, named_key(message))}")
    if len(lines) == 1:
        return f"invalid configuration: {lines[0]}"
    return "invalid configuration:\n" + "\n".join(f"  {line}" for line in lines)
