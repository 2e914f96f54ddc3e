"""The built wheel works on its own: installed into a fresh virtualenv and run from outside the
clone, `tandem demo --help` runs, the simulator's vLLM scripts are found inside the installed
package (nothing reaches back into the clone's `deploy/`), and the shipped judge models load.

The virtualenv gets the wheel only; its dependencies come from this interpreter's site-packages
through a `.pth` line, so the test downloads nothing. The check that nothing comes from the clone
is that every module and file asked for resolves under the fresh virtualenv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "router", "judge", "sim")

CHECK = """
import json, sys
from pathlib import Path
import judge, router, sim
from judge.model import JudgeModel
from router.policies.judge import DEFAULT_DRAFT_MODEL, DEFAULT_MODEL
from sim.vllm_edge import SCRIPTS_DIR

scripts = {name: str(SCRIPTS_DIR / name) for name in ("install.sh", "serve.sh", "make_tiny_model.py", "constraints.txt")}
models = {}
for path in (DEFAULT_MODEL, DEFAULT_DRAFT_MODEL):
    JudgeModel.load(path)
    models[path.name] = str(path)
print(json.dumps({
    "packages": [judge.__file__, router.__file__, sim.__file__],
    "scripts": scripts,
    "present": all(Path(p).is_file() for p in scripts.values()),
    "models": models,
}))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    # Built from a copy so that the build's own files (build/, *.egg-info) never land in the clone.
    source = work / "source"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(dist)], check=True, timeout=300
    )
    wheels = list(dist.glob("tandem-*.whl"))
    assert len(wheels) == 1, wheels
    env_dir = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheels[0])], check=True, timeout=300
    )
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir


def _run(venv: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    # From the virtualenv's own folder: the clone is neither the working directory nor on the path.
    return subprocess.run(command, cwd=venv, env=env, capture_output=True, text=True, timeout=120)


def test_tandem_demo_help_runs_from_the_installed_wheel(venv: Path) -> None:
    done = _run(venv, str(venv / "bin" / "tandem"), "demo", "--help")
    assert done.returncode == 0, done.stderr
    assert "--edge-vllm" in done.stdout


def test_the_wheel_ships_the_vllm_scripts_and_the_judge_models(venv: Path) -> None:
    done = _run(venv, str(venv / "bin" / "python"), "-c", CHECK)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    inside = str(venv.resolve())
    for path in [*found["packages"], *found["scripts"].values(), *found["models"].values()]:
        assert str(Path(path).resolve()).startswith(inside), f"{path} is not from the installed wheel"
    assert found["present"], found["scripts"]
    assert set(found["models"]) == {"judge.onnx", "judge-draft.onnx"}
    # The scripts are the clone's own, byte for byte.
    for name, path in found["scripts"].items():
        assert Path(path).read_bytes() == (ROOT / "sim" / "vllm" / name).read_bytes(), name
