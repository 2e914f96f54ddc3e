"""Look-alikes from real agent runs (public SWE-bench and Multi-SWE-bench trajectories, terminal
recordings): what the default detectors took for secrets, e-mails and addresses there, and the
values beside them that must still be found."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect


def found(text: str) -> set[tuple[str, str]]:
    return {(f.type, f.value) for f in detect(text)}


@pytest.mark.parametrize(
    "text",
    [
        # An empty query value: the next parameter is no password.
        'curl -s "http://localhost:8080/api/v1/pods?username=&password=&namespace=default&limit=5"',
        # The working directory under `PWD`.
        'docker run --rm -v "$PWD":/usr/src/myapp -w /usr/src/myapp maven:3 mvn -q test',
        "PWD=/fasterxml__jackson-databind",
        # A test's status line printed from a string.
        'print("PASS: 1e-200")',
        # A forge's SSH remote, as Maven's `scm` lines and `git clone` write it.
        "<connection>scm:git:git@github.com:FasterXML/jackson-databind.git</connection>",
        "git clone git@gitlab.com:group/project.git",
        # pip's installed version after a requirement, and a netmask.
        "Requirement already satisfied: nvidia-cudnn-cu12 in ./venv/lib (from torch>1.0.0->mteb) (9.10.2.21)",
        "netmask 255.255.0.0",
    ],
)
def test_a_look_alike_of_an_agent_run_is_no_finding(text: str) -> None:
    assert found(text) == set()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('curl "http://h/api?user=bob&password=Xy7pQ2rT9&ns=1"', "Xy7pQ2rT9"),
        ("PASS: hunter22x", "hunter22x"),
        ("password=/Xy7!abc9", "/Xy7!abc9"),
        ("contact ana.lima@acme.io", "ana.lima@acme.io"),
        ("inet 10.0.2.15  netmask 255.255.0.0", "10.0.2.15"),
        ("connect to 192.168.1.20 (primary)", "192.168.1.20"),
    ],
)
def test_the_values_beside_them_are_still_found(text: str, value: str) -> None:
    assert any(value in found_value for _kind, found_value in found(text)), found(text)
