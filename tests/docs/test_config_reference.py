"""The configuration reference (docs/configuration.md) is what the settings models say, and the
example config (deploy/tandem.example.yaml) names every key they accept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from router import config_reference
from router.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "tandem.example.yaml"
# Maps whose keys the user chooses; the reference writes them as placeholders.
USER_KEYED = {"upstreams": "<name>", "model_aliases": "<pattern>", "keys": "<key>"}
# Maps of plain values (a weight per value type): their keys are not configuration keys.
PLAIN_MAPS = {"privacy_weights", "inner_call_params"}


def _paths(data: dict[str, Any], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for key, value in data.items():
        path = f"{prefix}{key}"
        found.add(path)
        if key in PLAIN_MAPS or not isinstance(value, dict):
            continue
        if key in USER_KEYED:
            for item in value.values():
                if isinstance(item, dict):
                    found |= _paths(item, f"{path}.{USER_KEYED[key]}.")
        else:
            found |= _paths(value, f"{path}.")
    return found


def example_paths() -> tuple[set[str], dict[str, set[str]]]:
    """Key paths the example sets (routes apart), and the route keys it sets per strategy."""
    data = yaml.safe_load(EXAMPLE.read_text())
    routes = data.pop("routes")
    by_strategy: dict[str, set[str]] = {}
    for route in routes.values():
        keys = {f"routes.<route>.{path}" for path in _paths(route)}
        by_strategy.setdefault(route["strategy"], set()).update(keys)
    return _paths(data) | {"routes"}, by_strategy


def test_the_checked_in_reference_equals_the_generated_one() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert page == config_reference.render(), (
        "docs/configuration.md is stale: run `python -m router.config_reference > docs/configuration.md`"
    )


def test_the_generator_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "router.config_reference"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == config_reference.render()


def test_every_key_has_a_type_a_default_a_description_and_a_variable() -> None:
    assert config_reference.undescribed() == []
    common, own = config_reference.route_keys()
    keys = config_reference.settings_keys() + common + [key for keys in own.values() for key in keys]
    assert len(keys) > 100
    for key in keys:
        assert key.type and key.default and key.description, key
        assert key.env.startswith("TANDEM_") and " " not in key.env, key
    by_path = {key.path: key for key in keys}
    assert by_path["limits.max_json_depth"].default == "128"
    assert by_path["limits.max_json_depth"].env == "TANDEM_LIMITS__MAX_JSON_DEPTH"
    assert by_path["upstreams.<name>.base_url"].default == "required"
    assert set(own) >= {"random", "judge", "entropy", "advisor", "edge"}
    assert [key.default for key in own["edge"] if key.path.endswith(".failover")] == ["false"]


def test_a_key_without_a_description_stops_the_reference() -> None:
    from pydantic import BaseModel

    class Bare(BaseModel):
        undocumented: int = 1

    assert [key.description for key in config_reference._walk(Bare, [])] == [""]


def test_the_example_config_is_valid_and_names_every_key() -> None:
    load_settings(EXAMPLE)
    settings_paths, by_strategy = example_paths()
    missing = sorted(key.path for key in config_reference.settings_keys() if key.path not in settings_paths)
    common, own = config_reference.route_keys()
    all_route_keys = set().union(*by_strategy.values())
    missing += sorted(key.path for key in common if key.path not in all_route_keys)
    for strategy, keys in own.items():
        if strategy not in by_strategy:
            missing.append(f"a route of strategy {strategy}")
            continue
        missing += sorted(f"{key.path} ({strategy})" for key in keys if key.path not in by_strategy[strategy])
    assert missing == [], "deploy/tandem.example.yaml does not name: " + ", ".join(missing)


def test_the_key_check_catches_a_missing_key() -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    assert "limits.max_json_depth" in _paths(data)
    del data["limits"]["max_json_depth"]
    assert "limits.max_json_depth" not in _paths(data)
