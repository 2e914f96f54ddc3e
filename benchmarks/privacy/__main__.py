"""Privacy detection: precision and recall per type on the generated corpus, and the cost of
scanning, redacting and restoring.

    python -m benchmarks.privacy [--documents 1400] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from benchmarks.privacy.cold import clear_caches
from benchmarks.privacy.corpus import generate
from router.privacy.detect import _ENGINE, detect
from router.privacy.redact import Redactor, StreamRestorer

CHECKSUM_AND_KEYS = {
    "CARD",
    "IBAN",
    "NATIONAL_ID",
    "CLOUD_KEY",
    "CODE_TOKEN",
    "AI_KEY",
    "MESSAGING_TOKEN",
    "JWT",
    "PRIVATE_KEY",
}
# The generated corpus names the value's format; detection reports its kind (router/privacy/kinds.py).
KIND_OF = {
    "CN_RESIDENT_ID": "NATIONAL_ID",
    "ES_DNI": "NATIONAL_ID",
    "AWS_ACCESS_KEY": "CLOUD_KEY",
    "GOOGLE_API_KEY": "CLOUD_KEY",
    "GITHUB_TOKEN": "CODE_TOKEN",
    "OPENAI_KEY": "AI_KEY",
    "SLACK_TOKEN": "MESSAGING_TOKEN",
}


def quality(documents: int, seed: int) -> dict[str, tuple[int, int, int]]:
    counts: dict[str, list[int]] = {}
    for document in generate(documents, seed):
        found = {(f.type, f.value) for f in detect(document.text)}
        truth = {(KIND_OF.get(kind, kind), value) for kind, value in document.truth}
        for kind, _value in found | truth:
            counts.setdefault(kind, [0, 0, 0])
        for kind, _value in found & truth:
            counts[kind][0] += 1
        for kind, _value in found - truth:
            counts[kind][1] += 1
        for kind, _value in truth - found:
            counts[kind][2] += 1
    return {kind: (tp, fp, fn) for kind, (tp, fp, fn) in sorted(counts.items())}


def per_kb_us(texts: list[str], repeat: int = 5) -> list[float]:
    """Each text's best cost over `repeat` scans, every one a first sight (cold.py): `detect`
    keeps the texts it scanned lately, which made every scan after the first a lookup."""
    costs = []
    for text in texts:
        size_kb = len(text.encode()) / 1024
        best = min(_timed(lambda t=text: detect(t)) for _ in range(repeat))
        costs.append(best * 1e6 / size_kb)
    return costs


def _timed(call: object) -> float:
    clear_caches()
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=1400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"prefilter: {'hyperscan' if _ENGINE is not None else 'none (pure re)'}")
    print(f"detection quality on {args.documents} generated documents (seed {args.seed})")
    print(f"{'type':20} {'TP':>6} {'FP':>5} {'FN':>5} {'precision':>10} {'recall':>8}")
    failing = []
    for kind, (tp, fp, fn) in quality(args.documents, args.seed).items():
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        mark = ""
        if kind in CHECKSUM_AND_KEYS and (precision < 0.95 or recall < 0.95):
            mark = "  <- below 0.95"
            failing.append(kind)
        print(f"{kind:20} {tp:>6} {fp:>5} {fn:>5} {precision:>10.3f} {recall:>8.3f}{mark}")
    print(
        "targets (checksum-backed and key types): precision >= 0.95 and recall >= 0.95:",
        "met" if not failing else f"missed for {', '.join(failing)}",
    )

    corpus = [d.text for d in generate(300, args.seed + 1)]
    tool_output = "\n".join(corpus)
    kb_chunks = [tool_output[i : i + 1024] for i in range(0, min(len(tool_output), 300 * 1024), 1024)]
    costs = per_kb_us(kb_chunks)
    plain = ("2026-11-29 12:00:01 INFO build step 42 ok in 3.14 s; tests passed: 118\n" * 15000)[: 1024 * 1024]
    print("\nscanning cost")
    print(
        f"  1 KB slices of the corpus (dense with values): p50 {statistics.median(costs):.1f} us/KB, "
        f"p99 {sorted(costs)[int(0.99 * len(costs))]:.1f} us/KB"
    )
    print(f"  1 MB of ordinary log output: {min(_timed(lambda: detect(plain)) for _ in range(5)) * 1e3:.1f} ms")
    dense = (tool_output * (1024 * 1024 // len(tool_output) + 1))[: 1024 * 1024]
    print(
        f"  1 MB of the corpus (values every few lines): {min(_timed(lambda: detect(dense)) for _ in range(3)) * 1e3:.1f} ms"
    )
    # Typical agent tool output: code, logs and test runs, with a sensitive value every few KB.
    filler = (
        "def handler(event):\n    return process(event['body'])  # 12:30:45\n"
        "2026-11-29 12:00:01 INFO build step 42 ok in 3.14 s; tests passed: 118\n"
    ) * 20
    mixed = "".join(filler + document for document in corpus)
    mixed_chunks = [mixed[i : i + 1024] for i in range(0, min(len(mixed), 400 * 1024), 1024)]
    mixed_costs = per_kb_us(mixed_chunks)
    print(
        f"  1 KB slices of typical tool output (a value every ~{len(filler) // 1024 + 1} KB): "
        f"p50 {statistics.median(mixed_costs):.1f} us/KB, p99 {sorted(mixed_costs)[int(0.99 * len(mixed_costs))]:.1f} us/KB"
    )
    big_mixed = (mixed * (1024 * 1024 // len(mixed) + 1))[: 1024 * 1024]
    print(f"  1 MB of typical tool output: {min(_timed(lambda: detect(big_mixed)) for _ in range(3)) * 1e3:.1f} ms")
    print("  targets: <= 20 us per KB at p50; a 1 MB tool output <= 20 ms (caches emptied before each scan)")

    # Redaction and restoration of one agent step: a 20-message history holding 30 values.
    documents = generate(20, args.seed + 2)
    vault = {value: f"[{kind}_{i}]" for i, (kind, value) in enumerate(sorted({t for d in documents for t in d.truth}))}
    messages = [{"role": "tool" if i % 2 else "user", "content": d.text} for i, d in enumerate(documents)]
    answer = {
        "choices": [
            {
                "message": {
                    "content": " ".join(list(vault.values())[:5]),
                    "tool_calls": [
                        {"function": {"name": "send", "arguments": json.dumps({"to": next(iter(vault.values()))})}}
                    ],
                }
            }
        ]
    }
    timings = []
    for _ in range(200):
        started = time.perf_counter()
        redactor = Redactor(vault)
        redactor.messages(messages)
        redactor.restore_answer({"choices": [dict(c) for c in answer["choices"]]})
        restorer = StreamRestorer(redactor)
        restorer.feed(b'data: {"choices": [{"index": 0, "delta": {"content": "to [EMAIL_1] ok"}}]}\n\n')
        timings.append(time.perf_counter() - started)
    size = sum(len(m["content"]) for m in messages) / 1024
    print(
        f"\nredaction + restoration of a step ({len(messages)} messages, {size:.0f} KB, {len(vault)} values): "
        f"p50 {statistics.median(timings) * 1e3:.2f} ms, p99 {sorted(timings)[int(0.99 * len(timings))] * 1e3:.2f} ms "
        "(target <= 1 ms at p50)"
    )


if __name__ == "__main__":
    main()
    # The acceptance figures: public sources, held-out part (benchmarks/privacy/evaluate.py).
    from benchmarks.privacy import evaluate

    evaluate.main([])
    # People's data in agent forms: names and addresses (opt-in), phones and ids (people.py).
    from benchmarks.privacy import people

    people.main([])
    # Credentials in the forms agents see (benchmarks/privacy/agent_forms.py): tuned on the
    # development part; the held-out part gives the acceptance figures.
    from benchmarks.privacy import agent_forms

    print()
    agent_forms.main(["--part", "dev"])
    print()
    agent_forms.main(["--part", "heldout"])
