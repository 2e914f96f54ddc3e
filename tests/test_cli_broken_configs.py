"""`tandem check` on broken configs: each exits 2 with a message naming what is wrong, never a
traceback (the table the issue asks for: the config, the variable, what the message names)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = "upstreams:\n  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n  cloud: {base_url: 'https://cloud.example/v1', model: big}\n"

# (case, config text, extra environment, what the message must name)
CASES = [
    ("unknown top-level key", BASE + "max_body_byte: 1000\n", {}, "max_body_byte"),
    ("misspelt nested key", BASE + "limits: {max_json_dept: 10}\n", {}, "limits.max_json_dept"),
    ("wrong type", BASE + "limits: {max_json_depth: deep}\n", {}, "limits.max_json_depth"),
    ("out of range", BASE + "routes:\n  tandem: {strategy: random, p: 1.5}\n", {}, "routes.tandem.random.p"),
    ("unknown strategy", BASE + "routes:\n  tandem: {strategy: coinflip}\n", {}, "routes.tandem"),
    (
        "no edge upstream",
        "upstreams:\n  cloud: {base_url: 'https://cloud.example/v1', model: big}\n",
        {},
        "upstreams.edge",
    ),
    ("base_url without a scheme", BASE.replace("http://127.0.0.1:8000/v1", "127.0.0.1:8000/v1"), {}, "base_url"),
    ("alias to no route", BASE + "model_aliases:\n  'gpt-*': {route: nowhere}\n", {}, "model_aliases.gpt-*"),
    ("unknown_model_route to no route", BASE + "unknown_model_route: nowhere\n", {}, "unknown_model_route"),
    ("judge upstream not configured", BASE + "routes:\n  tandem: {strategy: llm_judge, judge: oracle}\n", {}, "oracle"),
    (
        "task regex that does not compile",
        BASE + "routes:\n  tandem: {strategy: task, cloud_if_matches: '(['}\n",
        {},
        "cloud_if_matches",
    ),
    ("several workers without Redis", BASE + "server: {workers: 2}\n", {}, "server.workers"),
    (
        "missing api_key_file",
        BASE.replace("model: big}", "model: big, api_key_file: /nonexistent/key}"),
        {},
        "api_key_file",
    ),
    ("missing client_api_keys_file", BASE + "client_api_keys_file: /nonexistent/keys\n", {}, "client_api_keys_file"),
    (
        "credentials in base_url and a key",
        BASE.replace("https://cloud.example", "https://u:p@cloud.example").replace(
            "model: big}", "model: big, api_key_env: X}"
        ),
        {},
        "upstreams.cloud",
    ),
    ("Redis without the vault key", BASE + "redis_url: redis://127.0.0.1:6379/0\n", {}, "TANDEM_VAULT_KEY"),
    (
        "redis_url without a scheme",
        BASE + "redis_url: '127.0.0.1:6379'\n",
        {"TANDEM_VAULT_KEY": "A" * 43 + "="},
        "redis_url",
    ),
    ("empty TANDEM_REDIS_URL", BASE, {"TANDEM_REDIS_URL": "", "TANDEM_VAULT_KEY": "A" * 43 + "="}, "redis_url: empty"),
    ("bad value in an environment variable", BASE, {"TANDEM_LIMITS__MAX_JSON_DEPTH": "deep"}, "max_json_depth"),
    # A list field's variable is JSON: a bare key or an empty value names the variable and the form.
    (
        "a list variable not in JSON",
        BASE,
        {"TANDEM_CLIENT_API_KEYS": "sk-one"},
        "TANDEM_CLIENT_API_KEYS: the environment",
    ),
    ("an empty list variable", BASE, {"TANDEM_CLIENT_API_KEYS": ""}, "must be JSON"),
    ("not YAML", BASE + "routes: [unclosed\n", {}, "not valid YAML"),
    ("a list at the top level", "- upstreams\n", {}, "mapping at the top level"),
    # Past Python's recursion limit in the YAML parser (a traceback of thousands of lines before).
    ("nested too deeply", "a: " + "[" * 10000 + "]" * 10000 + "\n", {}, "nests its values too deeply"),
    # Passed by check before, and every step (or serve's start, for Redis) failed on them.
    ("base_url port out of range", BASE.replace("8000/v1", "99999/v1"), {}, "base_url has no port from 1 to 65535"),
    ("base_url without a host", BASE.replace("http://127.0.0.1:8000/v1", "http://"), {}, "base_url names no host"),
    ("base_url with a space", BASE.replace("127.0.0.1:8000", "edge host:8000"), {}, "base_url holds white space"),
    (
        "an endpoint's port out of range",
        BASE.replace("model: small}", "model: small, endpoints: ['http://a:8000/v1', 'http://b:0/v1']}"),
        {},
        "each of endpoints has no port",
    ),
    (
        "redis_url port out of range",
        BASE + "redis_url: 'redis://127.0.0.1:99999/0'\n",
        {"TANDEM_VAULT_KEY": "A" * 43 + "="},
        "redis_url: it has no port from 1 to 65535",
    ),
    ("an empty model name", BASE.replace("model: small", "model: ''"), {}, "upstreams.edge.model"),
    # A misspelt kind weighed nothing, silently; a negative weight lowered the score.
    ("a misspelt privacy kind", BASE + "privacy_weights: {EMIAL: 3}\n", {}, "privacy_weights.EMIAL: not a kind"),
    ("a negative privacy weight", BASE + "privacy_weights: {EMAIL: -3}\n", {}, "privacy_weights.EMAIL"),
    ("a privacy weight of NaN", BASE + "privacy_weights: {EMAIL: .nan}\n", {}, "privacy_weights.EMAIL"),
    (
        "a judge model that is not there",
        BASE + "routes:\n  tandem: {strategy: judge, model: /nonexistent/judge.onnx}\n",
        {},
        "routes.tandem.judge",
    ),
]


@pytest.mark.parametrize(("case", "text", "env", "named"), CASES, ids=[case for case, *_ in CASES])
def test_a_broken_config_exits_2_naming_the_problem(
    case: str, text: str, env: dict[str, str], named: str, tmp_path: Path
) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(text)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    environment.update(env)
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=ROOT,
    )
    assert done.returncode == 2, f"{case}: {done.stdout}{done.stderr}"
    assert named in done.stderr, f"{case}: {done.stderr}"
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_base_config_of_the_table_is_valid(tmp_path: Path) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(BASE)
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    assert done.returncode == 0, done.stderr


def test_a_misspelt_privacy_kind_names_the_kind_meant_and_the_line(tmp_path: Path) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(BASE + "privacy_weights:\n  CARD: 3\n  emial: 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    assert done.returncode == 2
    assert "privacy_weights.emial: not a kind of sensitive value (did you mean EMAIL?" in done.stderr
    assert done.stderr.rstrip().endswith(f"({config}:6)"), done.stderr


def test_a_config_path_that_is_no_file_is_named_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", os.devnull],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")},
    )
    assert done.returncode == 2 and "is not a regular file" in done.stderr, done.stderr
