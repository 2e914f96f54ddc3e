"""The privacy stage of one step: scan what is new, then allow, redact, keep local or block
what would go to the cloud, and count what reached it.

Per-trajectory state lives in the trajectory's vault (memory or Redis, shared by replicas), kept
apart from its notes so that a step's start does not read it (router/trajectory/store.py), under
the vault's note keys (router/notes.py), which a trajectory's readers never see:
  vault:value:<placeholder>  the original value, sealed (it never leaves the premises;
                             router/privacy/vault.py)
  vault:id:<hash>            keyed value hash -> placeholder (stable numbering across steps and
                             replicas)
  vault:out:<placeholder>    the value reached the cloud (EC2-Bench's rule: what the cloud received)
and, in the trajectory's notes (one small field):
  vault:scanned              `N:digest`: which messages were scanned already (scanning is
                             incremental, by content: router/privacy/scanned.py)
The guard reads the vault incrementally: the process's memo (router/privacy/memo.py) keeps what
it learned and its position in the vault's log, and a step reads only the entries written since
(by another replica, or before a restart: then all of them, once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import orjson

from router.config.privacy import PrivacyMode, cloud_allowed, protects, redacts
from router.metrics.core import Metrics
from router.notes import VAULT_ID, VAULT_OUT, VAULT_SCANNED, VAULT_VALUE
from router.privacy.detect import detect
from router.privacy.detector import Finding
from router.privacy.exposure import exposure_summary, privacy_score, vault_of
from router.privacy.memo import PrivacyMemo, Seen, TrajectoryMemo
from router.privacy.naming import allocate, know, value_id
from router.privacy.redact import PLACEHOLDER, Redactor, kind_of, message_strings
from router.privacy.request_fields import field_strings, redact_fields
from router.privacy.url_parts import url_passwords
from router.privacy.vault import VaultCipher
from router.trajectory.store import TrajectoryStore

__all__ = [
    "IDS",
    "OUT",
    "SCANNED",
    "VAULT",
    "PrivacyGuard",
    "PrivacyMode",
    "exposure_summary",
    "message_texts",
    "privacy_score",
    "vault_of",
]

log = logging.getLogger("tandem.privacy")
VAULT, IDS, OUT, SCANNED = VAULT_VALUE, VAULT_ID, VAULT_OUT, VAULT_SCANNED


async def _discard(work: Coroutine[Any, Any, str]) -> None:
    await work


# New text from this size on is scanned off the event loop (a thread's hop costs ~0.1 ms; this
# much text takes 0.5 ms to tens of ms to scan, depending on how dense its values are).
THREAD_FROM_CHARS = 64 * 1024


def _detect_all(texts: list[str], optional: frozenset[str]) -> list[Finding]:
    return [finding for text in texts for finding in detect(text, optional)]


def message_texts(message: dict[str, Any]) -> list[str]:
    """Everything in a message that would reach the cloud (text, parts, tool-call arguments),
    decoded: the same strings the redactor replaces values in."""
    return message_strings(message)


class PrivacyGuard:
    """One step's privacy stage. What it learns of the trajectory (the vault opened, each
    message redacted) is kept in the process's `PrivacyMemo` for the next steps."""

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
        memo: PrivacyMemo | None = None,
        born: float | None = None,
        vault_size: int | None = None,
        optional: frozenset[str] = frozenset(),
    ) -> None:
        self._optional = optional  # the opt-in kinds the route detects (`privacy_detect`)
        self._spawn = spawn
        self._cipher = cipher
        self.route = route  # the metrics' route label
        self.mode = mode
        self.trajectory_id = trajectory_id
        self._notes = notes  # as the step began (read only: what this step writes is in _added)
        self._added: dict[str, str] = {}
        self._store = store
        self._metrics = metrics
        self.failed = False  # detection failed: the step counts as sensitive (fail closed)
        self.redacted = 0
        self.exposed: list[str] = []  # placeholders that first reached the cloud in this step
        self.exposed_kinds: set[str] = set()
        self.outgoing_encoded: list[bytes] | None = None  # kinds of the values the cloud received in this step
        # Without a process memo (tests, tools) the guard learns the trajectory afresh.
        self._memo = memo if memo is not None else PrivacyMemo()
        # The vault log's length as the step began (None: unknown, read what is new anyway).
        self._vault_size = vault_size
        self._loaded = False
        self._deferred: list[dict[str, Any]] | None = None  # messages whose scan waits (`defer_scan`)
        self._deferred_fields: dict[str, Any] | None = None
        self._fields: dict[str, Any] | None = None  # the request whose other fields were scanned
        self._messages: list[dict[str, Any]] = []  # the client's messages, as scanned
        self._entry = self._sync(born)

    def _sync(self, born: float | None) -> TrajectoryMemo:
        """The trajectory's memory, brought up to its notes (vault notes there were written by
        an earlier layout: each is read once). The vault itself is read by `load`."""
        memo, notes = self._memo, self._notes
        entry = memo.get(self.trajectory_id)
        if entry is not None and (
            (born is not None and entry.born is not None and born != entry.born) or len(notes) < len(entry.note_keys)
        ):
            memo.forget(self.trajectory_id)  # the trajectory began anew under this id
            entry = None
        if entry is None:
            entry = TrajectoryMemo(born=born)
            if any(key.startswith(VAULT) or key.startswith(OUT) for key in notes):
                memo.adopt(self.trajectory_id, entry)
        if len(notes) != len(entry.note_keys):
            fresh = notes.keys() - entry.note_keys
            entry.note_keys.update(fresh)
            for key in fresh:
                if key.startswith(VAULT):
                    self._learn(entry, key[len(VAULT) :], notes[key])
                elif key.startswith(OUT):
                    entry.exposed.add(key[len(OUT) :])
            memo.account(entry)
        return entry

    async def load(self) -> None:
        """Read the vault entries this process does not know yet: none when its memo has read
        as many as the vault's log holds (most steps: no round trip), those written since
        otherwise (another replica's values), the whole vault for a trajectory new to it."""
        if self._loaded:
            return
        self._loaded = True
        entry, size = self._entry, self._vault_size
        if size is not None and size < entry.vault_read:
            entry.vault_read = 0  # the log began again (expired, flushed): read it all again
        if size is None or entry.vault_read < size:
            read = await self._store.vault_since(self.trajectory_id, entry.vault_read)
            for key, value in read.entries:
                if key.startswith(VAULT) and value:
                    self._learn(entry, key[len(VAULT) :], value)
                elif key.startswith(OUT):
                    entry.exposed.add(key[len(OUT) :])
            entry.vault_read = read.next
            if read.entries:
                if not self._memo.holds(self.trajectory_id, entry):
                    self._memo.adopt(self.trajectory_id, entry)
                self._memo.account(entry)
        if entry.unopened:
            # A value that does not open (another key) cannot be redacted: fail closed.
            log.error("%d vault values of %s do not open with this key", len(entry.unopened), self.trajectory_id)
            self._metrics.privacy_failures.inc()
            self.failed = True

    def _learn(self, entry: TrajectoryMemo, placeholder: str, stored: str) -> None:
        value = stored if self._cipher is None else self._cipher.open(self.trajectory_id, placeholder, stored)
        if value is None:
            entry.unopened.add(placeholder)
            return
        know(entry, placeholder, value)

    def _get(self, key: str) -> str | None:
        return self._added.get(key, self._notes.get(key))

    @property
    def vault(self) -> dict[str, str]:
        """original value -> placeholder"""
        return self._entry.matcher.placeholder

    def _value_id(self, value: str) -> str:
        return value_id(self._cipher, value)

    @property
    def sensitive(self) -> bool:
        return self.failed or bool(self._entry.matcher.values) or bool(self._entry.unopened)

    async def scan(self, messages: list[dict[str, Any]], fields: dict[str, Any] | None = None) -> None:
        """Detect values in the messages not scanned before and in the request's other fields
        that reach the cloud (`fields`: the request; router/privacy/request_fields.py), at every
        step (they are resent whole, and texts seen lately cost a lookup); give each new value
        a placeholder."""
        await self.load()
        self._messages = messages
        # Read by content, not by count: a message the client edited since is read again
        # (router/privacy/scanned.py); a compacted history is read from its first change.
        read = self._memo.scanned
        scanned = read.first_unread(self.trajectory_id, messages, self._get(SCANNED))
        try:
            new_texts = [text for m in messages[scanned:] for text in message_texts(m)]
            texts = list(new_texts)
            if fields:
                self._fields = fields
                texts += field_strings(fields)
            if sum(map(len, texts)) >= THREAD_FROM_CHARS:
                # Scanned in a thread: a step with megabytes of new text (a dump, a huge paste)
                # takes seconds to scan, and on the event loop every other client would wait.
                findings = await asyncio.to_thread(_detect_all, texts, self._optional)
            else:
                findings = _detect_all(texts, self._optional)
            reserved = {p for text in texts if "[" in text for p in PLACEHOLDER.findall(text)}
        except Exception:  # a detector bug must not let a value through: fail closed
            log.exception("privacy detection failed; treating the step as sensitive")
            self._metrics.privacy_failures.inc()
            self.failed = True
            return
        await self._take(self._new(findings), reserved)
        note = read.read(self.trajectory_id, messages, scanned, sum(map(len, new_texts)))
        self._remember(SCANNED, note)
        # Off the request path: a replica that reads a stale note only scans a few messages
        # again, and values already in the vault are skipped.
        write = self._store.note(self.trajectory_id, SCANNED, note)
        if self._spawn is not None:
            self._spawn(_discard(write))
        else:
            await write

    def _new(self, findings: list[Finding]) -> dict[str, str]:
        """The values found that the trajectory does not know yet -> their kind, in the order found.
        A URL's password is a value of its own too: printed bare elsewhere (a `--requirepass`
        line, the same password in another file), it is replaced there as well."""
        known = self._entry.matcher.placeholder
        new: dict[str, str] = {}
        for finding in findings:
            if finding.value not in known and finding.value not in new:
                new[finding.value] = finding.type
            if finding.type == "URL_CREDENTIALS":
                for password in url_passwords(finding.value):
                    if password not in known and password not in new:
                        new[password] = "SECRET_ASSIGNMENT"
        return new

    async def _take(self, new: dict[str, str], reserved: set[str]) -> None:
        """Give each new value (`_new`) a placeholder."""
        if not new:
            return
        await self._allocate(new, reserved)
        detected: dict[str, int] = {}  # counted once a kind (a dump holds thousands)
        for kind in new.values():
            detected[kind] = detected.get(kind, 0) + 1
        for kind, count in detected.items():
            self._metrics.privacy_values.labels(self.route, kind, "detected").inc(count)
        if not self._memo.holds(self.trajectory_id, self._entry):
            self._memo.adopt(self.trajectory_id, self._entry)
        self._memo.account(self._entry)

    async def written(self, text: str) -> bool:
        """Whether a text the gateway had written from the trajectory (the edge's summary of its
        earlier steps) may go to the cloud. The edge may write a value in a form the scan never
        met (a card spaced anew, an address put in one line, one it made up): detection runs on
        the text afresh. On `redact` a new value gets its placeholder as any (the text goes out
        redacted); on `keep_local` and `block` a text with one may not go. On `allow`: as it is."""
        if not protects(self.mode) or not text:
            return True
        try:
            findings = _detect_all([text], self._optional)
        except Exception:  # a detector bug must not let a value through: fail closed
            log.exception("privacy detection of a text written for the cloud failed")
            self._metrics.privacy_failures.inc()
            return False
        new = self._new(findings)
        if not new:
            return True
        if not redacts(self.mode):
            return False
        await self._take(new, set(PLACEHOLDER.findall(text)))
        return True

    def defer_scan(self, messages: list[dict[str, Any]], fields: dict[str, Any] | None = None) -> None:
        """Scan `messages` later (`scan_deferred`): where the mode only measures (`allow`),
        nothing on the answer's path needs the detections unless the cloud receives the step, so
        an edge step's scan runs once its answer is out and a cloud call's just before it."""
        self._deferred = messages
        self._deferred_fields = fields

    @property
    def scan_waits(self) -> bool:
        return self._deferred is not None

    async def scan_deferred(self) -> None:
        """Run the scan `defer_scan` put off, if it has not run yet."""
        messages, self._deferred = self._deferred, None
        if messages is not None:
            await self.scan(messages, self._deferred_fields)

    def _remember(self, key: str, value: str) -> None:
        self._added[key] = value
        if key == SCANNED:
            self._entry.note_keys.add(key)  # the one note kept in the notes, not in the vault

    async def _allocate(self, new: dict[str, str], reserved: set[str]) -> None:
        """Give each new value (value -> kind) a placeholder, kept in the vault (naming.py)."""
        named = await allocate(self._store, self.trajectory_id, self._entry, self._cipher, new, reserved)
        for value, id_key, placeholder, sealed in named:
            self._remember(VAULT + placeholder, sealed)
            self._remember(id_key, placeholder)
            know(self._entry, placeholder, value)

    def redactor(self) -> Redactor:
        """A redactor over the trajectory's vault (shared, nothing rebuilt), whose `messages`
        reuses what earlier steps learned."""
        return _MemoRedactor(self)

    def answer_redactor(self) -> Redactor:
        """The redactor that puts originals back in the cloud's answers to this step: only the
        placeholders of values the client's request holds (its messages as it sent them, before
        any context shaping, and its other scanned fields). A placeholder of a value it did not
        send (typed by hand, or planted in a tool result by a page the agent read) is left as
        it is: the trajectory's other values are not the answer's to hand out."""
        redactor = _MemoRedactor(self)
        messages, fields, matcher = self._messages, self._fields, self._entry.matcher

        def held() -> frozenset[str]:
            placeholders: set[str] = set()
            for item in self.learned(messages) if messages else ():
                placeholders |= item.placeholders
            if fields and matcher.values:
                for text in field_strings(fields):
                    placeholders.update(matcher.placeholder[value] for _start, _end, value in matcher.find(text))
            return frozenset(placeholders)

        # Only once an answer holds one of the trajectory's placeholders (most hold none).
        redactor.restorable_from = held
        return redactor

    def learned(self, messages: list[dict[str, Any]], encode: bool = False) -> list[Seen]:
        return self._learned_with_kinds(messages, encode)[0]

    def _learned_with_kinds(
        self, messages: list[dict[str, Any]], encode: bool = False
    ) -> tuple[list[Seen], dict[str, int]]:
        if not self._entry.matcher.values:
            return [], {}
        learned = self._memo.learned_with_kinds(self._entry, messages, encode)
        self._memo.account(self._entry)
        return learned

    def learn_ahead(self, messages: list[dict[str, Any]]) -> None:
        """Learn the messages of a step the edge answered, once its answer is out: the route's
        next cloud step then learns only its own new messages on its path, not every message
        since its last cloud step (on a judge route, tens at a time: 1–2 ms). Nothing is
        counted: what reaches the cloud is counted when it does (`outgoing`)."""
        if not (self._entry.matcher.values and self._memo.holds(self.trajectory_id, self._entry)):
            return
        try:
            self._memo.learned(self._entry, messages, encode=redacts(self.mode))
            self._memo.account(self._entry)
        except Exception:  # the answer is out: a failure here costs the next step time, not data
            log.exception("privacy: learning an edge step's messages ahead failed")
            self._memo.forget(self.trajectory_id)

    def outgoing(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages as the cloud may receive them; records what reaches it. Where they are
        redacted, `outgoing_encoded` holds each one's JSON, for the body (else None)."""
        self.outgoing_encoded = None
        redacting = redacts(self.mode)
        seen, kinds = self._learned_with_kinds(messages, encode=redacting)
        if not seen:
            return messages
        if redacting:
            self.redacted += sum(kinds.values())
            for kind, times in kinds.items():
                self._metrics.privacy_values.labels(self.route, kind, "redacted").inc(times)
            # An item learned before without its encoding (its trajectory met another route
            # first) is encoded here, for this body only.
            self.outgoing_encoded = [
                item.encoded if item.encoded is not None else orjson.dumps(item.redacted) for item in seen
            ]
            return [item.redacted for item in seen]
        # allow: measure what goes out as it is.
        found: set[str] = set()
        exposed = self._entry.exposed
        for item in seen:
            if item.count and not item.settled:
                # Once all its values are known to be out, a message is not looked at again.
                item.settled = item.placeholders <= exposed
                found |= item.placeholders
        self.exposed_kinds.update(kinds)
        new = found - exposed - set(self.exposed)
        self.exposed.extend(sorted(new))
        return messages

    def quoted(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages with every known value replaced, for a prompt the gateway writes from
        them for the cloud (a transcript, a task), which the cloud receives redacted again as
        any message. Nothing is counted here: what reaches the cloud is counted in `outgoing`.
        The step's own messages go through the trajectory's memory; another list (a window of
        them, a draft added) is redacted afresh, so that it does not displace what the memory
        keeps of the step's."""
        if not self._entry.matcher.values:
            return messages
        if messages is self._messages:
            return [item.redacted for item in self.learned(messages, encode=redacts(self.mode))]
        return Redactor(self._entry.matcher).messages(messages)[0]

    def outgoing_fields(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The request's scanned fields (other than its messages) that change as the cloud may
        receive them: every known value replaced, where the mode redacts; counted as redacted."""
        if not (redacts(self.mode) and self._entry.matcher.values):
            return {}
        redactor = Redactor(self._entry.matcher)
        changed = redact_fields(raw, lambda text: redactor.text(text)[0])
        for value, times in redactor.replaced.items():
            kind = kind_of(self._entry.matcher.placeholder[value])
            self.redacted += times
            self._metrics.privacy_values.labels(self.route, kind, "redacted").inc(times)
        return changed

    def _expose_fields(self) -> None:
        """Where the request goes as it is: the known values in its other fields (`user`, tool
        descriptions…) reached the cloud too."""
        matcher = self._entry.matcher
        if not (self._fields and matcher.values):
            return
        texts = field_strings(self._fields)
        found = {matcher.placeholder[value] for text in texts for _start, _end, value in matcher.find(text)}
        new = found - self._entry.exposed - set(self.exposed)
        self.exposed_kinds.update(kind_of(placeholder) for placeholder in new)
        self.exposed.extend(sorted(new))

    async def measure(self, messages: list[dict[str, Any]]) -> None:
        """Count what reaches the cloud in `messages` and the request's other fields, sent as
        they are (a mode that does not redact): the scan put off, then `outgoing`, then the
        count written."""
        await self.scan_deferred()
        self.outgoing(messages)
        self._expose_fields()
        await self.commit()

    def count_blocked(self, messages: list[dict[str, Any]]) -> None:
        """Count the sensitive values of a step a `block` policy refused: each value in the
        messages once (a failed detection counts as one value of unknown type)."""
        if self.failed:
            self._metrics.privacy_values.labels(self.route, "unknown", "blocked").inc()
        found: set[str] = set()
        for item in self.learned(messages):
            found |= item.placeholders
        for placeholder in found:
            self._metrics.privacy_values.labels(self.route, kind_of(placeholder), "blocked").inc()

    def allows_cloud(self) -> bool:
        """Whether anything of this step may go to the cloud at all."""
        return cloud_allowed(self.mode, self.sensitive, self.failed)

    async def commit(self) -> None:
        """Write the step's exposure (once per value) and count it."""
        for placeholder in self.exposed:
            if placeholder not in self._entry.exposed and self._get(OUT + placeholder) is None:
                await self._store.vault_note(self.trajectory_id, OUT + placeholder, "1")
                self._remember(OUT + placeholder, "1")
                self._entry.exposed.add(placeholder)
                self._metrics.privacy_values.labels(self.route, kind_of(placeholder), "exposed").inc()


class _MemoRedactor(Redactor):
    """The guard's redactor: `messages` goes through the trajectory's memory."""

    def __init__(self, guard: PrivacyGuard) -> None:
        super().__init__(guard._entry.matcher)
        self._guard = guard

    def messages(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        seen = self._guard.learned(messages)
        if not seen:
            return messages, 0
        total = 0
        for item in seen:
            if item.count:
                total += item.count
                # The values themselves, as `Redactor.messages` counts them.
                for placeholder in item.placeholders:
                    self.found.add(self.matcher.value_of[placeholder])
        return [item.redacted for item in seen], total
