"""The Helm chart's judge-training CronJob, run for real: its rendered script, with the image's
`python` (this virtualenv) and its work folder here, against a live gateway whose judge route
reads the model volume. It exports and retrains (promoting only a candidate not worse on the
recent runs, cross-fitted); the gateway reloads."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from judge.model import DEFAULT_MODEL
from tests.deploy.test_helm import TRAINING, objects, one, training_script
from tests.deploy.tools import ROOT

ADMIN = "admin-key-for-the-job"
FAILURE = "Traceback (most recent call last):\n  File 'calc.py', line 3\nZeroDivisionError: division by zero"
# Commands that run code: their traceback is a failure by the harness-status label (a traceback
# in what `cat` or `grep` printed is file content, never a failure).
COMMANDS = ["python calc.py", "python -m pytest -q", "pytest -x tests/test_calc.py", "python -c 'import calc'"]


def _runs(client: httpx.Client, url: str, count: int, sessions: bool = True) -> None:
    """`count` runs of five steps, in which an action right after a failure almost always
    works and any other fails half the time: the opposite of the real runs the shipped model
    learnt from, so that a model trained on these rows is the better one here."""
    rng = random.Random(7)
    for run in range(count):
        task = f"Fix issue {run} in calc.py" + ("" if sessions else " (no session id)")
        history: list[dict[str, Any]] = [{"role": "user", "content": task}]
        failed = False
        for index in range(5):
            command = rng.choice(COMMANDS)
            call = {"id": f"c{run}-{index}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            call["function"]["arguments"] = json.dumps({"command": command})
            # The answer is the one the history will hold: a run without a session id is found
            # by it at its next step.
            fake = {
                "kind": "tool_call",
                "call_id": call["id"],
                "name": "bash",
                "arguments": call["function"]["arguments"],
            }
            body = {"model": "tandem", "messages": history, "fake": fake}
            headers = {"X-Session-ID": f"run-{run}"} if sessions else {}
            assert client.post(f"{url}/v1/chat/completions", json=body, headers=headers).status_code == 200
            failed = rng.random() < (0.05 if failed else 0.6)
            result = FAILURE if failed else f"ok {rng.randrange(1000)}\n" * rng.randrange(1, 30)
            history += [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": result},
            ]


def test_the_cronjob_script_promotes_a_model_the_gateway_reloads(
    make_gateway: Any, client: httpx.Client, tmp_path: Path
) -> None:
    volume = tmp_path / "judge-models"  # the model volume, seeded as the init container does
    volume.mkdir()
    for source in DEFAULT_MODEL.parent.glob("judge.*"):
        shutil.copyfile(source, volume / source.name)
    serving = volume / "judge.onnx"
    route = {"strategy": "judge", "record_features": True, "model": str(serving), "reload_check_s": 0.05}
    server = make_gateway(routes={"tandem": route}, admin_api_keys=[ADMIN])
    _runs(client, server.url, 40)
    _runs(client, server.url, 4, sessions=False)  # found by their history: runs as the others

    # Recent traffic alone (the shipped rows are a retrain test of their own: tests/judge/test_retrain.py).
    # The route here is a state judge (the chart's default retrains the draft judge's model).
    values = {**TRAINING["judgeTraining"], "labels": "failed", "shippedRows": "none", "sees": "state"}
    docs = objects({**TRAINING, "judgeTraining": values})
    env = {
        e["name"]: e.get("value", "")
        for e in one(docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    work = tmp_path / "work"
    work.mkdir()
    script = training_script(docs).replace("cd /work", f"cd {work}")
    env.update(
        GATEWAY_URL=server.url,
        TANDEM_ADMIN_API_KEYS=json.dumps([ADMIN]),
        SERVING=str(serving),
        HOME=str(work),
        MPLCONFIGDIR=str(work / ".matplotlib"),
        # The image's `python` and code: this virtualenv and this checkout.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(["/bin/sh", "-ec", script], env=env, capture_output=True, text=True, timeout=240)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "wrote 220 step(s)" in output  # every step of the 44 runs, as judge rows
    # The runs without a session id, stitched by their history, are four runs learnt from.
    assert "220 rows of 44 runs (0 run(s) with a rewritten history left out)" in output, output
    assert (work / "report" / "report.md").exists() and (work / "report" / "roc.png").exists()
    assert f"promoted to {serving}" in output, output
    card = json.loads((volume / "judge.card.json").read_text())
    assert "against the serving model" in card["evaluation"]["promotion"]["decision"]
    # The gateway picks the new model up by itself, between two steps.
    policy = server.gateway.routes["tandem"].policy
    body = {"model": "tandem", "messages": [{"role": "user", "content": "one more"}]}
    assert client.post(f"{server.url}/v1/chat/completions", json=body).status_code == 200
    assert policy.judge.reloads == 1 and policy.judge.reload_failures == 0
