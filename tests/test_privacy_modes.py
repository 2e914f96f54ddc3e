"""The privacy modes and what each means live in one module (router/config/privacy.py): its
predicates, the route setting that takes the modes, the label sets a route declares, and no
other module comparing a mode with a literal. In process, no sockets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from router.config import privacy as modes
from router.config.routes import RouteBase
from router.metrics.route_labels import step_labels
from router.settings import ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[1]
MODES = ("allow", "redact", "keep_local", "block")


def test_the_modes_and_their_meaning() -> None:
    assert get_args(modes.PrivacyMode) == MODES
    assert [m for m in MODES if modes.protects(m)] == ["redact", "keep_local", "block"]
    assert [m for m in MODES if modes.redacts(m)] == ["redact"]
    assert [m for m in MODES if modes.blocks(m)] == ["block"]
    assert [m for m in MODES if modes.can_keep_local(m)] == ["redact", "keep_local"]
    # (sensitive, detection failed) -> may anything of the step go to the cloud?
    table = {m: [modes.cloud_allowed(m, s, f) for s, f in ((False, False), (True, False), (True, True))] for m in MODES}
    assert table == {
        "allow": [True, True, True],
        "redact": [True, True, False],  # redacted; but with nothing to redact against, not at all
        "keep_local": [True, False, False],
        "block": [True, False, False],
    }


def test_a_route_takes_exactly_these_modes() -> None:
    assert get_args(RouteBase.model_fields["privacy"].annotation) == MODES
    with pytest.raises(ConfigError, match="privacy"):
        load_settings(routes={"tandem": {"strategy": "edge", "privacy": "hide"}})


@pytest.mark.parametrize("mode", MODES)
def test_a_route_declares_the_privacy_reasons_its_mode_can_give(mode: str) -> None:
    route = load_settings(routes={"r": {"strategy": "cloud", "privacy": mode}}).routes["r"]
    labels = step_labels(route, header_forced=False)
    assert (("edge", "privacy_keep_local") in labels) == (mode in ("redact", "keep_local"))
    assert (("edge", "pinned_edge") in labels) == (mode != "allow")


# Modules that still compare a mode with a literal, waiting for the owner of the file: each
# entry must still be true (remove it once that file uses router/config/privacy.py).
KNOWN: dict[str, int] = {}
COMPARISON = re.compile(r"""(?:mode|privacy)\s*(?:==|!=|in|not in)\s*[("']+(?:allow|redact|keep_local|block)\b""")


def test_no_other_module_compares_a_mode_with_a_literal() -> None:
    found = {}
    for path in (ROOT / "router").rglob("*.py"):
        name = path.relative_to(ROOT).as_posix()
        if name != "router/config/privacy.py" and (count := len(COMPARISON.findall(path.read_text()))):
            found[name] = count
    assert found == KNOWN
