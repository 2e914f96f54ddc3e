"""Runs harbor's Terminus-2 agent against the gateway with a local terminal in place of its
container: the agent's tmux session runs on this machine, in a given folder, and the
container's fixed folders (/logs/...) are mapped into a scratch folder. Run by the harbor
virtualenv's Python (3.12): `python run_terminus.py API_BASE WORKDIR SCRATCH TASK [summarize] [no-session]` (no-session:
its model calls name no session, as when harbor is not given one).
Prints the outcome as one JSON line."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

from harbor.agents.terminus_2.terminus_2 import Terminus2
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext

CONTAINER_LOGS = "/logs/"


class LocalTerminal:
    """The part of harbor's environment interface Terminus-2 uses, on this machine."""

    def __init__(self, work: Path, scratch: Path) -> None:
        self.work, self.scratch = work, scratch
        self.session_id = "tandem-terminus"
        self.default_user = None
        self.trial_paths = SimpleNamespace(agent_dir=scratch / "logs" / "agent")
        (scratch / "logs" / "agent").mkdir(parents=True, exist_ok=True)
        # A tmux server of its own: its socket lives in the scratch folder.
        self.env = {**os.environ, "TMUX_TMPDIR": str(scratch)}

    def _local(self, text: str) -> str:
        return text.replace(CONTAINER_LOGS, f"{self.scratch}/logs/")

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            self._local(command),
            cwd=cwd or self.work,
            env={**self.env, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout_sec)
        return ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=process.returncode or 0,
        )

    async def is_dir(self, path: str, user: str | int | None = None) -> bool:
        return (await self.exec(f"test -d {shlex.quote(path)}")).return_code == 0

    async def is_file(self, path: str, user: str | int | None = None) -> bool:
        return (await self.exec(f"test -f {shlex.quote(path)}")).return_code == 0

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        shutil.copy(source_path, self._local(target_path))

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        shutil.copy(self._local(source_path), target_path)


async def main() -> None:
    api_base, workdir, scratch, task = sys.argv[1:5]
    flags = set(sys.argv[5:])
    summarize = "summarize" in flags
    terminal = LocalTerminal(Path(workdir), Path(scratch))
    (Path(scratch) / "agent-logs").mkdir(exist_ok=True)
    agent = Terminus2(
        logs_dir=Path(scratch) / "agent-logs",
        model_name="openai/tandem",
        api_base=api_base,
        max_turns=6,
        enable_summarize=summarize,
        record_terminal_session=False,
        session_id=None if "no-session" in flags else "terminus-run",
    )
    result: dict[str, object] = {}
    try:
        await agent.setup(terminal)  # type: ignore[arg-type]
        context = AgentContext()
        await agent.run(task, terminal, context)  # type: ignore[arg-type]
        result["status"] = "finished"
        result["tokens"] = [context.n_input_tokens, context.n_output_tokens]
    except Exception as exc:  # the test reads what the client made of the error
        result["status"] = "raised"
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await terminal.exec("tmux kill-server")
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
