"""Where a bad config value came from (router/config_errors.py): the keys a place accepts for
"did you mean", the YAML line of a key or list item, the environment variable that set it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from router.config_errors import describe, did_you_mean, env_source, keys_at, yaml_line
from router.settings import Settings


def test_did_you_mean_looks_among_the_keys_accepted_there() -> None:
    assert did_you_mean("thresold", Settings, ("routes", "tandem", "entropy")) == " (did you mean threshold?)"
    assert did_you_mean("inptu", Settings, ("upstreams", "edge", "prices")) == " (did you mean input?)"
    assert did_you_mean("max_body_byte", Settings, ()) == " (did you mean max_body_bytes?)"
    # A top-level key written inside `limits` is not suggested there: it would not be accepted.
    assert did_you_mean("max_body_byte", Settings, ("limits",)) == ""
    assert did_you_mean("zzzz", Settings, ()) == ""
    assert {"host", "insecure_open_proxy", "access_log"} <= keys_at(Settings, ("server",))


def test_yaml_line_finds_keys_and_list_items(tmp_path: Path) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text("limits:\n  max_json_depth: 3\nclient_api_keys:\n  - a\n  - b\n")
    assert yaml_line(config, ("limits", "max_json_depth")) == 2
    assert yaml_line(config, ("client_api_keys", 1)) == 5
    assert yaml_line(config, ("routes", "tandem")) is None
    assert yaml_line(tmp_path / "absent.yaml", ("limits",)) is None


def test_env_source_names_the_variable_or_the_section_that_set_it() -> None:
    environ = {"TANDEM_LIMITS__MAX_JSON_DEPTH": "deep", "TANDEM_SERVER": '{"port": 1}', "OTHER": "x"}
    assert env_source(("limits", "max_json_depth"), environ) == "TANDEM_LIMITS__MAX_JSON_DEPTH"
    assert env_source(("server", "port"), environ) == "TANDEM_SERVER"
    assert env_source(("redis_url",), environ) is None


def test_a_setting_of_another_strategy_names_the_strategies_it_belongs_to() -> None:
    with pytest.raises(ValidationError) as raised:
        Settings.model_validate({"routes": {"tandem": {"strategy": "edge", "sees": "draft"}}})
    message = describe(raised.value, None, Settings)
    assert message == (
        "invalid configuration: routes.tandem.sees: not a setting of strategy 'edge' (it belongs to: judge, llm_judge)"
    )
    # A key no strategy has is still unknown, and the tag chose the keys suggested.
    assert keys_at(Settings, ("routes", "tandem", "edge")) >= {"failover"}
    assert "sees" not in keys_at(Settings, ("routes", "tandem", "edge"))
    # Deeper than the route's own keys, the other strategies' keys are not named.
    with pytest.raises(ValidationError) as raised:
        Settings.model_validate({"routes": {"tandem": {"strategy": "edge", "constraints": {"sees": "x"}}}})
    assert "unknown key, not permitted here" in describe(raised.value, None, Settings)
    with pytest.raises(ValidationError) as raised:
        Settings.model_validate({"routes": {"tandem": {"strategy": "judge", "thresold": 0.5}}})
    assert "unknown key, not permitted here (did you mean threshold?)" in describe(raised.value, None, Settings)
