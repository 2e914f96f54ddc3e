"""How far `/v1/messages/count_tokens`' estimate (router/surfaces/messages/token_estimate.py) is from real
tokenizers, and from the JSON-bytes/4 it replaced, on Messages bodies built from this
repository's own code and docs (an agent's turns: a system prompt, tool calls reading files,
their results).

    python -m benchmarks.token_estimate [--bodies 40]

The tokenizers are the ones available offline: tiktoken's o200k_base and cl100k_base (their
files as litellm ships them) and Anthropic's published legacy tokenizer (litellm ships its
JSON; read with `tokenizers`). A reference count is the tokenizer's count of the body's texts
and JSON plus the same per-message and tool overheads the estimate adds (those no offline
tokenizer knows): the error shown is the characters-per-token part. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import os
import random
import statistics
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from router.surfaces.messages import token_estimate as te

ROOT = Path(__file__).resolve().parents[2]


def _tokenizers() -> dict[str, Any]:
    # litellm's folder, found without importing litellm (its import goes to the network).
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations, "litellm is not installed"
    folder = Path(spec.submodule_search_locations[0]) / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    import tiktoken
    from tokenizers import Tokenizer

    anthropic = Tokenizer.from_file(str(folder / "anthropic_tokenizer.json"))
    out: dict[str, Any] = {"anthropic_legacy": lambda text: len(anthropic.encode(text).ids)}
    for name in ("o200k_base", "cl100k_base"):
        encoding = tiktoken.get_encoding(name)
        out[name] = lambda text, e=encoding: len(e.encode(text, disallowed_special=()))
    return out


def _bodies(count: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    code = sorted(p for p in (ROOT / "router").rglob("*.py"))
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md")) or code
    tools = [
        {
            "name": "Read",
            "description": "Reads a file from the local filesystem.",
            "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        }
    ]
    bodies = []
    for n in range(count):
        turns: list[dict[str, Any]] = [{"role": "user", "content": "Find why the stream stalls and fix it."}]
        for call in range(rng.randint(1, 8)):
            path = rng.choice(code)
            use = {"type": "tool_use", "id": f"toolu_{n}_{call}", "name": "Read", "input": {"file_path": str(path)}}
            turns.append({"role": "assistant", "content": [{"type": "text", "text": "Reading it."}, use]})
            result = {"type": "tool_result", "tool_use_id": use["id"], "content": path.read_text()}
            turns.append({"role": "user", "content": [result]})
        system = rng.choice(docs).read_text()
        bodies.append({"model": "m", "max_tokens": 8, "system": system, "tools": tools, "messages": turns})
    return bodies


def _reference(body: dict[str, Any], count: Callable[[str], int]) -> float:
    """The tokenizer's count of what the estimate reads, plus the estimate's own overheads."""
    texts: list[str] = [body["system"]]
    jsons: list[Any] = list(body["tools"])
    for turn in body["messages"]:
        content = turn["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "tool_use":
                texts.append(block["name"])
                jsons.append(block["input"])
            elif block["type"] == "tool_result":
                texts.append(block["content"])
    overhead = len(body["messages"]) * te.MESSAGE_TOKENS + te.TOOL_SYSTEM_TOKENS + te.TOOL_TOKENS * len(body["tools"])
    return sum(count(t) for t in texts) + sum(count(orjson.dumps(j).decode()) for j in jsons) + overhead


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=int, default=40)
    args = parser.parse_args()
    counters = _tokenizers()
    bodies = _bodies(args.bodies)
    report: dict[str, Any] = {"bodies": len(bodies)}
    for name, count in counters.items():
        ours, old = [], []
        for body in bodies:
            truth = _reference(body, count)
            ours.append(te.input_tokens(body) / truth - 1)
            old.append(max(len(orjson.dumps(body)) // 4, 1) / truth - 1)
        report[name] = {
            "estimate_error_mean_pct": round(100 * statistics.fmean(ours), 1),
            "estimate_error_abs_max_pct": round(100 * max(abs(e) for e in ours), 1),
            "json_bytes_error_mean_pct": round(100 * statistics.fmean(old), 1),
            "json_bytes_error_abs_max_pct": round(100 * max(abs(e) for e in old), 1),
        }
    report["screenshot"] = _screenshot()
    print(json.dumps(report, indent=2))


def _screenshot() -> dict[str, Any]:
    """A 1280x800 PNG of 200 KB in a tool result: Anthropic documents width x height / 750
    tokens for it; JSON bytes / 4 counted its base64."""
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 1280, 800) + b"\x08\x06\x00\x00\x00"
    png = header + random.Random(1).randbytes(200_000 - len(header))
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()},
    }
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [image]}
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [result]}]}
    return {
        "documented_tokens": round(1280 * 800 / 750) + te.MESSAGE_TOKENS,
        "estimate": te.input_tokens(body),
        "json_bytes_estimate": len(orjson.dumps(body)) // 4,
    }


if __name__ == "__main__":
    main()
