"""The configuration reference, generated from the settings models: every key the gateway
accepts, with its type, default, description and environment variable.

`python -m router.config_reference > docs/configuration.md` writes the page;
`tests/docs/test_config_reference.py` holds the checked-in page equal to the output, and
`deploy/tandem.example.yaml` naming every key listed here. Nothing in the gateway imports this
module: it runs only when the page is made.

A key's description is its field's `description`; where a field has none, the comment lines
written just above it in its class (the style much of `router/settings.py` uses); where neither
exists, the docstring of the model it holds. A key with none of the three is an error.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from router.config.routes import RouteBase
from router.config.strategies import RouteSettings
from router.settings import Settings

ENV_PREFIX = "TANDEM_"
# Map keys a user names (`upstreams.<name>`): how the reference writes them.
PLACEHOLDERS = {
    "upstreams": "<name>",
    "routes": "<route>",
    "model_aliases": "<pattern>",
    "keys": "<key>",
}


@dataclass(frozen=True)
class Key:
    """One configuration key, as the reference lists it."""

    path: str  # dotted, with placeholders for map keys: upstreams.<name>.base_url
    type: str
    default: str
    description: str
    env: str


class MissingDescription(Exception):
    """A key has no description (neither a field description, a comment nor a model docstring)."""


@cache
def _field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The comment lines written just above each field in the model's class body."""
    comments: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            source_lines, _ = inspect.getsourcelines(cls)
        except (OSError, TypeError):
            continue
        source = textwrap.dedent("".join(source_lines))
        lines = source.splitlines()
        tree = ast.parse(source)
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node in body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                above: list[str] = []
                index = node.lineno - 2
                while index >= 0 and lines[index].strip().startswith("#"):
                    above.insert(0, lines[index].strip().lstrip("#").strip())
                    index -= 1
                if above:
                    comments[node.target.id] = " ".join(above)
    return comments


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is Literal:
        return " | ".join(f'"{arg}"' if isinstance(arg, str) else str(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in args)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is list:
        return f"list[{_type_name(args[0])}]"
    if origin is tuple:
        return f"[{', '.join(_type_name(arg) for arg in args)}]"
    if origin is dict:
        held = _models_in(args[1])
        value = "route" if len(held) > 1 else _type_name(args[1])
        return f"map[{_type_name(args[0])}, {value}]"
    if annotation is SecretStr:
        return "string (secret)"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path", Any: "any"}
    if annotation in names:
        return names[annotation]
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " | ".join(f'"{member.value}"' for member in annotation)
    return getattr(annotation, "__name__", str(annotation))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    value = _plain(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int) and value >= 1024 * 1024 and value % (1024 * 1024) == 0:
        return f"{value} ({value // (1024 * 1024)} MiB)"
    if isinstance(value, dict) and value and (len(str(value)) > 60 or all(isinstance(v, dict) for v in value.values())):
        return "see its keys"
    return str(value).replace("'", '"').replace("True", "true").replace("False", "false").replace("None", "null")


def _description(model: type[BaseModel], name: str, info: FieldInfo) -> str:
    if info.description:
        return info.description
    comment = _field_comments(model).get(name)
    if comment:
        return comment
    for held in _models_in(info.annotation):
        if held.__doc__ and held.__doc__ is not BaseModel.__doc__:
            return " ".join(held.__doc__.split())
    return ""


def _env(parts: list[str]) -> str:
    return ENV_PREFIX + "__".join(part.strip("<>").upper() for part in parts)


def _walk(model: type[BaseModel], parts: list[str], skip: frozenset[str] = frozenset()) -> Iterator[Key]:
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        path = [*parts, name]
        annotation = info.annotation
        yield Key(
            path=".".join(path),
            type=_type_name(annotation),
            default=_default(info),
            description=_description(model, name, info),
            env=_env(path),
        )
        origin = get_origin(annotation)
        if origin is dict:
            value_models = _models_in(get_args(annotation)[1])
            if name == "routes":
                continue  # listed by strategy in their own section
            for held in value_models:
                yield from _walk(held, [*path, PLACEHOLDERS.get(name, "<key>")])
        else:
            for held in _models_in(annotation):
                yield from _walk(held, path)


def settings_keys() -> list[Key]:
    """Every key of the top level and its nested models, routes' own keys left to `route_keys`."""
    return list(_walk(Settings, []))


def _strategy_models() -> list[type[BaseModel]]:
    return [model for model in get_args(RouteSettings) if isinstance(model, type)]


def strategy_name(model: type[BaseModel]) -> str:
    return str(get_args(model.model_fields["strategy"].annotation)[0])


def route_keys() -> tuple[list[Key], dict[str, list[Key]]]:
    """Keys every route takes (whatever its strategy), and each strategy's own keys."""
    route = ["routes", "<route>"]
    common = list(_walk(RouteBase, route))
    common_names = frozenset(RouteBase.model_fields)
    own: dict[str, list[Key]] = {}
    for model in _strategy_models():
        # A shared key is listed again under a strategy only where that strategy changes its
        # default (failover is off on edge routes).
        names = frozenset(
            name for name in common_names if model.model_fields[name].default == RouteBase.model_fields[name].default
        )
        own[strategy_name(model)] = [
            key for key in _walk(model, route, skip=names) if key.path != "routes.<route>.strategy"
        ]
    return common, own


def _row(key: Key) -> str:
    description = key.description.replace("|", "\\|")
    kind = key.type.replace("|", "\\|")
    default = key.default.replace("|", "\\|")
    return f"| `{key.path}` | {kind} | `{default}` | {description} | `{key.env}` |"


HEADER = "| key | type | default | description | environment variable |\n|---|---|---|---|---|"


def undescribed() -> list[str]:
    """Key paths with no description; the reference refuses to be written while there are any."""
    common, own = route_keys()
    keys = settings_keys() + common + [key for keys in own.values() for key in keys]
    return sorted({key.path for key in keys if not key.description})


def render() -> str:
    """The reference page, Markdown."""
    missing = undescribed()
    if missing:
        raise MissingDescription("keys without a description: " + ", ".join(missing))
    common, own = route_keys()
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m router.config_reference > docs/configuration.md` from the",
        "settings models (router/settings.py and the models it uses). Do not edit by hand: a test",
        "holds this page equal to the generator's output. -->",
        "",
        "Tandem reads a YAML file (`tandem serve --config FILE`) and environment variables",
        "`TANDEM_<KEY>`, nested with `__` (`TANDEM_UPSTREAMS__EDGE__BASE_URL=…`,",
        "`TANDEM_LIMITS__MAX_JSON_DEPTH=…`); the environment wins over the file. Values that are",
        "mappings or lists are given to a variable as JSON (`TANDEM_ADMIN_API_KEYS='[\"k1\"]'`).",
        "Unknown keys are errors, and so is a key written twice in one mapping (YAML's merge,",
        "`<<: *anchor`, may still be overridden); an invalid configuration stops start-up with a message",
        "naming each key, its problem and where the value came from (the file and line, or the",
        "environment variable). `tandem check --config FILE` checks a file without serving. A",
        "complete annotated file is",
        "`deploy/tandem.example.yaml`; a test holds it naming every key below.",
        "",
        "Keys written `<name>` are map keys you choose (an upstream's name, a route's model name,",
        "an alias pattern, a client key). `required` means the key has no default.",
        "",
        "## Top-level keys",
        "",
        HEADER,
        *(_row(key) for key in settings_keys()),
        "",
        "The embedded defaults of `upstreams`: `edge` at `http://127.0.0.1:8000/v1` (model",
        "`Qwen/Qwen3.5-9B`, prices 0.10 / 0.10 / 0.15), `cloud` at `https://api.openai.com/v1`",
        "(model `gpt-5.4`, key from `OPENAI_API_KEY`, prices 2.50 / 0.25 / 15.00). The default",
        "`routes` is `tandem: {strategy: random, p: 0.4}`; `tandem/edge` and `tandem/cloud` always",
        "exist unless redefined.",
        "",
        "## Keys of every route",
        "",
        "Each entry of `routes` names its `strategy` (one of "
        + ", ".join(f"`{name}`" for name in own)
        + ") and takes these keys whatever the strategy.",
        "",
        HEADER,
        *(_row(key) for key in common),
    ]
    for name, keys in own.items():
        out += ["", f"## Strategy `{name}`", ""]
        if keys:
            out += [HEADER, *(_row(key) for key in keys)]
        else:
            out.append("No keys of its own.")
    return "\n".join(out) + "\n"


def all_paths() -> set[str]:
    """Every key path the reference lists (strategies' keys under `routes.<route>`)."""
    common, own = route_keys()
    keys = settings_keys() + common + [key for keys in own.values() for key in keys]
    return {key.path for key in keys}


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
