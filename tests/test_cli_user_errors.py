"""No traceback from any `tandem` command on a user's error: each ends with one line on standard
error naming the problem and a non-zero exit. Config errors name the file and line, or the
environment variable, and suggest the key meant; an empty config file is warned about; every
option's help has its default and every command an example."""

from __future__ import annotations

import gzip
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web

from judge.modes import names_for
from tests.fake_upstream import free_port
from tests.raw_upstream import RawUpstream

ROOT = Path(__file__).resolve().parents[1]
BASE = "upstreams:\n  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n  cloud: {base_url: 'https://cloud.example/v1', model: big}\n"
# Imported first by Python (site), it makes scikit-learn look uninstalled: a missing [train] extra.
NO_SKLEARN = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("sklearn", "skl2onnx"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Missing())
"""


def tandem(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, pythonpath: str = ""
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, str(ROOT)) if p)
    environment["COLUMNS"] = "200"  # help on one line an option
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "router.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=cwd,
    )


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


def shipped_rows(folder: Path, count: int = 400) -> str:
    """The first rows of the shipped training data, as a small file."""
    with gzip.open(ROOT / "judge" / "data" / "real-runs.jsonl.gz", "rt") as source:
        lines = [next(source) for _ in range(count)]
    return write(folder, "rows.jsonl", "".join(lines))


CASES: list[tuple[str, list[str], str]] = [
    ("check: missing file", ["check", "--config", "{tmp}/nowhere.yaml"], "does not exist"),
    ("check: bad YAML", ["check", "--config", "{bad_yaml}"], "not valid YAML"),
    ("check: unknown key", ["check", "--config", "{unknown_key}"], "did you mean max_body_bytes?"),
    ("serve: bad value", ["serve", "--config", "{base}", "--port", "99999"], "--port: 99999 is out of range"),
    ("serve: missing file", ["serve", "--config", "{tmp}/nowhere.yaml"], "does not exist"),
    ("serve: open proxy", ["serve", "--config", "{keyed}", "--host", "0.0.0.0"], "refusing to serve on 0.0.0.0"),
    (
        "export: unreachable gateway",
        ["trajectories", "export", "--url", "http://127.0.0.1:{closed}", "--out", "{tmp}/out.jsonl"],
        "cannot reach http://127.0.0.1:{closed}",
    ),
    (
        "export: unreachable Redis",
        ["trajectories", "export", "--redis-url", "redis://127.0.0.1:{closed}/0", "--out", "{tmp}/out.jsonl"],
        "cannot connect",
    ),
    ("export: bad --since", ["trajectories", "export", "--url", "http://x", "--since", "soon", "--out", "o"], "since"),
    ("audit expand: missing file", ["audit", "expand", "{tmp}/audit.jsonl"], "no audit file"),
    ("demo: bad value", ["demo", "--tasks", "0"], "argument --tasks: 0 is out of range: from 1 to 100"),
    (
        "demo: bad port",
        ["demo", "--serve", "--port", "70000"],
        "argument --port: 70000 is out of range: from 0 to 65535",
    ),
    ("demo: negative port", ["demo", "--serve", "--port", "-5"], "argument --port: -5 is out of range"),
    ("check: not text", ["check", "--config", "{noise}"], "is not UTF-8 text"),
    ("check: a folder", ["check", "--config", "{tmp}"], "is a folder"),
    (
        "export: not a Redis URL",
        ["trajectories", "export", "--redis-url", "http://x", "--out", "{tmp}/o"],
        "not a Redis URL",
    ),
    (
        "export: out under a file",
        ["trajectories", "export", "--url", "http://x", "--out", "{afile}/o"],
        "is a file, not a folder",
    ),
    ("audit expand: not an audit line", ["audit", "expand", "{array}", "--only"], "array.jsonl:2: a JSON list"),
    (
        "judge train: out under a file",
        ["judge", "train", "--data", "{rows}", "--out", "{afile}/j.onnx"],
        "is a file, not a folder",
    ),
    ("judge train: empty out", ["judge", "train", "--data", "{rows}", "--out", ""], "an empty path"),
    ("judge train: out is a folder", ["judge", "train", "--data", "{rows}", "--out", "{tmp}"], "is a folder"),
    (
        "judge train: negative seed",
        ["judge", "train", "--data", "{rows}", "--out", "{tmp}/j.onnx", "--seed", "-1"],
        "--seed: -1 is out of range",
    ),
    (
        "judge train: held-out of 0",
        ["judge", "train", "--data", "{rows}", "--out", "{tmp}/j.onnx", "--held-out", "0"],
        "a share in (0, 1)",
    ),
    (
        "judge evaluate: report under a file",
        ["judge", "evaluate", "--model", "m.onnx", "--data", "{rows}", "--report", "{afile}/r"],
        "is a file, not a folder",
    ),
    (
        "judge evaluate: held-out below 0",
        ["judge", "evaluate", "--model", "m.onnx", "--data", "{rows}", "--held-out", "-1"],
        "a share in (0, 1)",
    ),
    (
        "judge promote: held-out of nan",
        ["judge", "promote", "--candidate", "c.onnx", "--data", "{rows}", "--held-out", "nan"],
        "a share in (0, 1)",
    ),
    (
        "judge lofo: no bootstrap",
        ["judge", "lofo", "--data", "{rows}", "--bootstrap", "0"],
        "--bootstrap: 0 is out of range",
    ),
    ("judge lofo: out is a file", ["judge", "lofo", "--data", "{rows}", "--out", "{afile}"], "is a file, not a folder"),
    (
        "judge retrain: work under a file",
        ["judge", "retrain", "--data", "{rows}", "--work", "{afile}/w"],
        "is a file, not a folder",
    ),
    (
        "judge share: no run at once",
        ["judge", "share", "--data", "{rows}", "--concurrent", "0"],
        "--concurrent: 0 is out of range",
    ),
    (
        "judge share: negative rate",
        ["judge", "share", "--data", "{rows}", "--rate", "-1"],
        "--rate: -1.0 is out of range",
    ),
    (
        "judge label: no step a request",
        [
            "judge",
            "label",
            "--data",
            "{rows}",
            "--url",
            "http://x/v1",
            "--model",
            "m",
            "--out",
            "o",
            "--steps-per-request",
            "0",
        ],
        "--steps-per-request: 0 is out of range",
    ),
    (
        "judge label: negative retries",
        ["judge", "label", "--data", "{rows}", "--url", "http://x/v1", "--model", "m", "--out", "o", "--retries", "-1"],
        "--retries: -1 is out of range",
    ),
    (
        "judge train: every feature ignored",
        ["judge", "train", "--data", "{rows}", "--out", "{tmp}/j.onnx", "--ignore", "{every_feature}"],
        "would read nothing",
    ),
    ("judge train: missing extra", ["judge", "train", "--data", "{rows}", "--out", "{tmp}/j.onnx"], "tandem[train]"),
    (
        "judge train: missing data",
        ["judge", "train", "--data", "{tmp}/none.jsonl", "--out", "{tmp}/j.onnx"],
        "none.jsonl",
    ),
    (
        "judge evaluate: missing model",
        ["judge", "evaluate", "--model", "{tmp}/none.onnx", "--data", "{rows}"],
        "none.onnx: model file not found",
    ),
    (
        "judge label: unreachable teacher",
        ["judge", "label", "--data", "{rows}", "--url", "http://127.0.0.1:{closed}/v1", "--model", "m", "--out", "o"],
        "no row labelled; http://127.0.0.1:{closed}/v1: request failed: ConnectError",
    ),
    ("judge audit: empty file", ["judge", "audit", "--file", "{empty}"], "no audited step in it"),
    ("judge audit: not its lines", ["judge", "audit", "--file", "{array}"], "array.jsonl:1: missing family"),
    ("unknown option", ["serve", "--prot", "80"], "unrecognized arguments: --prot"),
    # A URL of the right scheme that names no address: a traceback from the client before.
    (
        "export: port out of range",
        ["trajectories", "export", "--url", "http://127.0.0.1:99999", "--out", "{tmp}/o"],
        "--url 'http://127.0.0.1:99999' has no port from 1 to 65535",
    ),
    (
        "export: Redis port out of range",
        ["trajectories", "export", "--redis-url", "redis://127.0.0.1:99999/0", "--out", "{tmp}/o"],
        "--redis-url 'redis://127.0.0.1:99999/0' has no port from 1 to 65535",
    ),
    ("export: no host", ["trajectories", "export", "--url", "http://", "--out", "{tmp}/o"], "'http://' names no host"),
    # Said at once, not after every retry of every request has failed on it (48 s before).
    (
        "judge label: no host",
        ["judge", "label", "--data", "{rows}", "--url", "http:///v1", "--model", "m", "--out", "{tmp}/o"],
        "argument --url: 'http:///v1' names no host",
    ),
    # Huge counts: a numpy memory error's traceback, a task list built until memory ran out.
    (
        "judge train: trees past memory",
        ["judge", "train", "--data", "{rows}", "--out", "{tmp}/j.onnx", "--trees", "99999999999"],
        "argument --trees: 99999999999 is out of range: from 1 to 10000",
    ),
    ("judge lofo: too deep", ["judge", "lofo", "--data", "{rows}", "--depth", "50"], "--depth: 50 is out of range"),
    ("demo: tasks past memory", ["demo", "--tasks", "99999999"], "--tasks: 99999999 is out of range: from 1 to 100"),
    # uvicorn's error and exit 3 after a start-up line saying it served.
    ("serve: no such host", ["serve", "--host", "no such host", "--port", "0"], "cannot serve on no such host:0"),
]


@pytest.mark.parametrize(("case", "args", "named"), CASES, ids=[case for case, *_ in CASES])
def test_a_user_error_is_one_line_and_a_non_zero_exit(case: str, args: list[str], named: str, tmp_path: Path) -> None:
    values = {
        "tmp": str(tmp_path),
        "bad_yaml": write(tmp_path, "bad.yaml", BASE + "routes: [unclosed\n"),
        "unknown_key": write(tmp_path, "unknown.yaml", BASE + "max_body_byte: 1000\n"),
        "base": write(tmp_path, "base.yaml", BASE),
        "keyed": write(tmp_path, "keyed.yaml", BASE.replace("model: big}", "model: big, api_key_env: CLOUD_KEY_T}")),
        "closed": str(free_port()),
        "rows": shipped_rows(tmp_path) if "{rows}" in args else "",
        "afile": write(tmp_path, "afile", "a regular file\n"),
        "array": write(tmp_path, "array.jsonl", '{"audit_id": "a", "trajectory_id": "t", "input": []}\n[1, 2]\n'),
        "noise": str(tmp_path / "noise.yaml"),
        "empty": write(tmp_path, "empty.jsonl", ""),
        "every_feature": ",".join(names_for("state")),
    }
    (tmp_path / "noise.yaml").write_bytes(bytes(range(128, 256)) * 3)
    shim = str(tmp_path / "shim")
    os.mkdir(shim)
    write(Path(shim), "sitecustomize.py", NO_SKLEARN if "missing extra" in case else "")
    done = tandem(*(arg.format(**values) for arg in args), env={"CLOUD_KEY_T": "sk-test-SECRETVALUE"}, pythonpath=shim)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in done.stderr, done.stderr
    assert named.format(**values) in output, output
    said = [line for line in done.stderr.splitlines() if line.startswith(("tandem", "usage:")) or "error" in line]
    problem = [line for line in said if not line.startswith("usage:") and not line.startswith("  ")]
    assert len(problem) <= 1, done.stderr
    assert "sk-test-SECRETVALUE" not in output


def test_a_config_error_names_the_file_and_line(tmp_path: Path) -> None:
    config = write(tmp_path, "tandem.yaml", BASE + "limits:\n  max_json_dept: 10\n")
    done = tandem("check", "--config", config)
    assert done.returncode == 2
    assert f"limits.max_json_dept: unknown key, not permitted here (did you mean max_json_depth?) ({config}:5)" in (
        done.stderr
    )


def test_a_value_from_the_environment_names_the_variable(tmp_path: Path) -> None:
    config = write(tmp_path, "tandem.yaml", BASE + "limits: {max_json_depth: 10}\n")
    done = tandem("check", "--config", config, env={"TANDEM_LIMITS__MAX_JSON_DEPTH": "deep"})
    assert done.returncode == 2
    assert "from the environment variable TANDEM_LIMITS__MAX_JSON_DEPTH" in done.stderr, done.stderr
    assert f"{config}:" not in done.stderr


def test_a_tandem_variable_that_sets_nothing_is_warned_about(tmp_path: Path) -> None:
    """The settings read the environment by name: a misspelt variable was silently ignored (a
    gateway without the client keys it was given, on another port)."""
    config = write(tmp_path, "tandem.yaml", BASE)
    env = {
        "TANDEM_CLIENT_API_KEY": '["sk-x"]',
        "TANDEM_PORT": "9000",
        "TANDEM_PURE": "1",
        "TANDEM_SERVER__PORT": "9001",
    }
    done = tandem("check", "--config", config, env=env)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "warning: environment variable" in line]
    assert said == [
        "tandem: warning: environment variable TANDEM_CLIENT_API_KEY sets no setting and is ignored "
        "(did you mean TANDEM_CLIENT_API_KEYS?)",
        "tandem: warning: environment variable TANDEM_PORT sets no setting and is ignored "
        "(did you mean TANDEM_SERVER__PORT?)",
    ], done.stderr
    assert "sk-x" not in done.stderr + done.stdout


def test_an_empty_config_file_is_warned_about(tmp_path: Path) -> None:
    config = write(tmp_path, "tandem.yaml", "# nothing yet\n")
    done = tandem("check", "--config", config)
    assert done.returncode == 0, done.stderr
    assert f"warning: config file {config} is empty; using the embedded defaults" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["check"],
        ["serve"],
        ["demo"],
        ["trajectories", "export"],
        ["audit", "expand"],
        *(
            ["judge", name]
            for name in (
                "train",
                "calibrate",
                "label",
                "evaluate",
                "promote",
                "import",
                "groups",
                "lofo",
                "audit",
                "share",
                "retrain",
            )
        ),
    ],
    ids=lambda c: " ".join(c),
)
def test_every_option_has_help_and_every_command_an_example(command: list[str]) -> None:
    done = tandem(*command, "--help")
    assert done.returncode == 0
    assert "example:\n  tandem " in done.stdout
    lines = done.stdout.splitlines()
    options = [i for i, line in enumerate(lines) if line.startswith("  -") and "--help" not in line]
    assert options
    for index in options:
        # An option's help follows its name on the line, or on the next one when the name is long.
        has_help = re.match(r"  -\S*( \S+)?(, -\S+( \S+)?)*  +\S", lines[index]) or re.match(
            r" {10,}\S", lines[index + 1]
        )
        assert has_help, lines[index]
    if command == ["judge", "train"]:
        assert "(default: 0.4)" in done.stdout and "none: read from the data" in done.stdout
    if command == ["demo"]:
        assert "(default: 7)" in done.stdout and "(default: 8080)" in done.stdout


def test_serve_on_a_port_in_use_says_so_before_its_start_up_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = tandem("serve", "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"tandem: cannot serve on 127.0.0.1:{port}: Address already in use (choose another --host or --port)"
    )


def test_an_export_the_gateway_refuses_says_which_key_to_give(tmp_path: Path) -> None:
    async def refuse(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "admin key required"}}, status=401)

    gateway = RawUpstream({("GET", "/v1/trajectories"): refuse}).start()
    try:
        done = tandem(
            "trajectories", "export", "--url", f"http://127.0.0.1:{gateway.port}", "--out", str(tmp_path / "o")
        )
    finally:
        gateway.stop()
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "answered 401 Unauthorized (give an admin key: --api-key or TANDEM_ADMIN_KEY)" in done.stderr


SOURCES = [
    ("workers", BASE + "server: {workers: 2}\n", "server.workers is 2", "(tandem.yaml:4)"),
    (
        "key file",
        BASE.replace("model: big}", "model: big, api_key_file: /nonexistent/key}"),
        "upstreams.cloud.api_key_file /nonexistent/key",
        "(tandem.yaml:3)",
    ),
    ("alias", BASE + "model_aliases:\n  'gpt-*': {route: nowhere}\n", "model_aliases.gpt-* names", "(tandem.yaml:5)"),
    ("no edge", "upstreams:\n  cloud: {base_url: 'https://c.example/v1', model: big}\n", "upstreams.edge is", ":1)"),
    ("YAML", BASE + "routes: [unclosed\n", "not valid YAML: expected ',' or ']'", "(tandem.yaml:5:1)"),
    # PyYAML alone would keep the second `routes` and drop the first without a word.
    (
        "repeated key",
        BASE + "routes:\n  a: {strategy: edge}\nroutes:\n  b: {strategy: cloud}\n",
        "the key 'routes' is given twice in one mapping (first on line 4)",
        "(tandem.yaml:6:1)",
    ),
    (
        "repeated nested key",
        BASE + "routes:\n  a: {strategy: edge, strategy: cloud}\n",
        "the key 'strategy' is given twice in one mapping (first on line 5)",
        "(tandem.yaml:5:23)",
    ),
    (
        "judge model",
        BASE + "routes:\n  tandem: {strategy: judge, model: /nonexistent/judge.onnx}\n",
        "routes.tandem.judge",
        "(tandem.yaml:5)",
    ),
]


@pytest.mark.parametrize(("case", "text", "named", "source"), SOURCES, ids=[case for case, *_ in SOURCES])
def test_a_check_across_keys_names_the_line_too(case: str, text: str, named: str, source: str, tmp_path: Path) -> None:
    config = write(tmp_path, "tandem.yaml", text)
    done = tandem("check", "--config", config, cwd=tmp_path)
    assert done.returncode == 2
    line = done.stderr.strip().replace(f"{tmp_path}/", "")
    assert len(line.splitlines()) == 1 and named in line and line.endswith(source), line
