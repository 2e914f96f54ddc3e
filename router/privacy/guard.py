"""The privacy stage of one step: scan what is new, then allow, redact, keep local or block
what would go to the cloud, and count what reached it.

Per-trajectory state lives in the trajectory's notes (memory or Redis, shared by replicas):
  pii:<placeholder>     the original value, sealed (the vault; it never leaves the premises;
                        router/privacy/vault.py)
  pii_id:<hash>         keyed value hash -> placeholder (stable numbering across steps and replicas)
  pii_out:<placeholder> the value reached the cloud (EC2-Bench's rule: what the cloud received)
  pii_scanned           how many messages were scanned already (scanning is incremental)
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Literal

from router.metrics import Metrics
from router.privacy.detect import detect
from router.privacy.redact import PLACEHOLDER, Redactor, message_strings
from router.privacy.vault import VaultCipher
from router.trajectory.store import TrajectoryStore

log = logging.getLogger("tandem.privacy")
PrivacyMode = Literal["allow", "redact", "keep_local", "block"]
VAULT, IDS, OUT, SCANNED = "pii:", "pii_id:", "pii_out:", "pii_scanned"


async def _discard(work: Coroutine[Any, Any, str]) -> None:
    await work


def _hash(value: str) -> str:
    return hashlib.blake2b(value.encode(), digest_size=10).hexdigest()


def message_texts(message: dict[str, Any]) -> list[str]:
    """Everything in a message that would reach the cloud (text, parts, tool-call arguments),
    decoded: the same strings the redactor replaces values in."""
    return message_strings(message)


def privacy_score(notes: Mapping[str, str], weights: Mapping[str, float]) -> float:
    """`1 − Σ weight × leaked / Σ weight` over the values seen; 1.0 when none were."""
    seen = {key[len(VAULT) :] for key in notes if key.startswith(VAULT)}
    if not seen:
        return 1.0
    exposed = {key[len(OUT) :] for key in notes if key.startswith(OUT)}

    def weight(placeholder: str) -> float:
        return weights.get(placeholder[1:].rsplit("_", 1)[0], 1.0)

    total = sum(weight(p) for p in seen)
    leaked = sum(weight(p) for p in seen & exposed)
    return 1.0 - leaked / total if total else 1.0


def exposure_summary(notes: Mapping[str, str], weights: Mapping[str, float]) -> dict[str, Any]:
    seen: dict[str, int] = {}
    exposed: dict[str, int] = {}
    for key in notes:
        if key.startswith(VAULT):
            kind = key[len(VAULT) + 1 :].rsplit("_", 1)[0]
            seen[kind] = seen.get(kind, 0) + 1
            if OUT + key[len(VAULT) :] in notes:
                exposed[kind] = exposed.get(kind, 0) + 1
    return {"seen": seen, "exposed": exposed, "score": privacy_score(notes, weights)}


def _kind(placeholder: str) -> str:
    """`[EMAIL_2]` -> `EMAIL`"""
    return placeholder[1:].rsplit("_", 1)[0]


class PrivacyGuard:
    """One step's privacy stage."""

    def __init__(
        self,
        mode: PrivacyMode,
        trajectory_id: str,
        notes: Mapping[str, str],
        store: TrajectoryStore,
        metrics: Metrics,
        spawn: Callable[[Coroutine[Any, Any, None]], None] | None = None,
        cipher: VaultCipher | None = None,
        route: str = "",
    ) -> None:
        self._spawn = spawn
        self._cipher = cipher
        self.route = route  # the metrics' route label
        self.mode = mode
        self.trajectory_id = trajectory_id
        self._notes = dict(notes)
        self._store = store
        self._metrics = metrics
        self.failed = False  # detection failed: the step counts as sensitive (fail closed)
        self.redacted = 0
        self.exposed: list[str] = []  # placeholders that reached the cloud in this step

    @property
    def vault(self) -> dict[str, str]:
        """original value -> placeholder"""
        found: dict[str, str] = {}
        for key, stored in self._notes.items():
            if not key.startswith(VAULT):
                continue
            placeholder = key[len(VAULT) :]
            value = stored if self._cipher is None else self._cipher.open(self.trajectory_id, placeholder, stored)
            if value is None:
                # A value that does not open (another key) cannot be redacted: fail closed.
                if not self.failed:
                    log.error("vault value %s of %s does not open with this key", placeholder, self.trajectory_id)
                    self._metrics.privacy_failures.inc()
                self.failed = True
                continue
            found[value] = placeholder
        return found

    def _value_id(self, value: str) -> str:
        return _hash(value) if self._cipher is None else self._cipher.value_id(value)

    @property
    def sensitive(self) -> bool:
        return self.failed or any(key.startswith(VAULT) for key in self._notes)

    async def scan(self, messages: list[dict[str, Any]]) -> None:
        """Detect values in the messages not scanned before; give each new value a placeholder."""
        scanned = int(self._notes.get(SCANNED, "0") or 0)
        if scanned > len(messages):
            scanned = 0  # the client compacted its history: scan it again
        try:
            findings = [f for m in messages[scanned:] for text in message_texts(m) for f in detect(text)]
            reserved = {p for m in messages[scanned:] for text in message_texts(m) for p in PLACEHOLDER.findall(text)}
        except Exception:  # a detector bug must not let a value through: fail closed
            log.exception("privacy detection failed; treating the step as sensitive")
            self._metrics.privacy_failures.inc()
            self.failed = True
            return
        known = self.vault
        for finding in findings:
            if finding.value in known:
                continue
            placeholder = await self._allocate(finding.type, finding.value, reserved)
            known[finding.value] = placeholder
            self._metrics.privacy_values.labels(self.route, finding.type, "detected").inc()
        self._notes[SCANNED] = str(len(messages))
        # Off the request path: a replica that reads a stale count only scans a few messages
        # again, and values already in the vault are skipped.
        write = self._store.note(self.trajectory_id, SCANNED, str(len(messages)))
        if self._spawn is not None:
            self._spawn(_discard(write))
        else:
            await write

    async def _allocate(self, kind: str, value: str, reserved: set[str]) -> str:
        taken = {key[len(VAULT) :] for key in self._notes if key.startswith(VAULT)} | reserved
        number = sum(1 for p in taken if p.startswith(f"[{kind}_")) + 1
        while f"[{kind}_{number}]" in taken:
            number += 1
        value_id = self._value_id(value)
        placeholder = await self._store.note(self.trajectory_id, IDS + value_id, f"[{kind}_{number}]", keep_first=True)
        stored = value if self._cipher is None else self._cipher.seal(self.trajectory_id, placeholder, value)
        await self._store.note(self.trajectory_id, VAULT + placeholder, stored)
        self._notes[VAULT + placeholder] = stored
        self._notes[IDS + value_id] = placeholder
        return placeholder

    def redactor(self) -> Redactor:
        return Redactor(self.vault)

    def outgoing(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages as the cloud may receive them; records what reaches it."""
        redactor = self.redactor()
        if redactor.empty:
            return messages
        redacted, count = redactor.messages(messages)
        if self.mode == "redact":
            self.redacted += count
            vault = self.vault
            for value, times in redactor.replaced.items():
                self._metrics.privacy_values.labels(self.route, _kind(vault[value]), "redacted").inc(times)
            return redacted
        # allow: measure what goes out as it is.
        vault = self.vault
        found = {vault[value] for value in redactor.found}
        self.exposed.extend(sorted(found - set(self.exposed)))
        return messages

    def count_blocked(self, messages: list[dict[str, Any]]) -> None:
        """Count the sensitive values of a step a `block` policy refused: each value in the
        messages once (a failed detection counts as one value of unknown type)."""
        if self.failed:
            self._metrics.privacy_values.labels(self.route, "unknown", "blocked").inc()
        redactor = self.redactor()
        redactor.messages(messages)
        vault = self.vault
        for value in redactor.found:
            self._metrics.privacy_values.labels(self.route, _kind(vault[value]), "blocked").inc()

    def allows_cloud(self) -> bool:
        """Whether anything of this step may go to the cloud at all."""
        if self.mode in ("keep_local", "block"):
            return not self.sensitive
        if self.mode == "redact":
            return not self.failed
        return True

    async def commit(self) -> None:
        """Write the step's exposure (once per value) and count it."""
        for placeholder in self.exposed:
            if OUT + placeholder not in self._notes:
                await self._store.note(self.trajectory_id, OUT + placeholder, "1")
                self._notes[OUT + placeholder] = "1"
                self._metrics.privacy_values.labels(self.route, _kind(placeholder), "exposed").inc()
