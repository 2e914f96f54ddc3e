"""What the gateway keeps of a step outside the vault, on a route whose privacy policy treats
values as sensitive (`redact`, `keep_local`, `block`): placeholders, never the originals.
That holds for the gateway's own words about a step too: a record's error quoting an upstream.

The trajectory's `task` is written when its first step begins, before the step's scan has
numbered the values, so it gets typed placeholders without a number (`[EMAIL]`); the audit
log's content gets the trajectory's own numbered placeholders (what the cloud received).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from router.config.privacy import protects
from router.privacy.detect import detect
from router.privacy.redact import Redactor
from router.protocol.text import TASK_CHARS, task_of

if TYPE_CHECKING:
    from router.privacy.guard import PrivacyGuard

log = logging.getLogger("tandem.privacy")
WITHHELD = "[task withheld: sensitive-value detection failed]"
WITHHELD_TEXT = "[text withheld: sensitive-value detection failed]"


def stored_task(messages: list[dict[str, Any]], mode: str) -> str:
    """The task (the user's request behind the client's boilerplate) as the trajectory keeps
    it: truncated after redaction, so that a value cut by the truncation is still found."""
    text = task_of(messages, TASK_CHARS * 4)
    if not text or not protects(mode):
        return text[:TASK_CHARS]
    # Only the head can survive truncation; a margin keeps a value that straddles the cut whole.
    return masked(text[: TASK_CHARS * 4])[:TASK_CHARS]


def masked(text: str) -> str:
    """`text` with every detected value as an unnumbered typed placeholder (`[EMAIL]`); withheld
    whole when detection fails (fail closed, as the privacy stage does)."""
    try:
        return _masked(text)
    except Exception:
        log.exception("sensitive-value detection failed; withholding the text")
        return WITHHELD


def _found_masked(text: str) -> str:
    findings = detect(text)
    if not findings:
        return text
    return Redactor({f.value: f"[{f.type}]" for f in findings}).text(text)[0]


# Every step of a trajectory resends its task: it is masked once (a failure is not kept).
_masked = functools.lru_cache(maxsize=4096)(_found_masked)


def kept_text(guard: PrivacyGuard, text: str) -> str:
    """Free text the gateway keeps of a step outside the vault (an error, an upstream's bytes
    quoted in one) as a sensitive route keeps messages: the trajectory's known values as its
    own placeholders, then any other value detected as a typed one (an upstream may say what
    the step never did). Withheld whole when detection fails."""
    if not protects(guard.mode) or not text:
        return text
    try:
        redactor = guard.redactor()
        if not redactor.empty:
            text = redactor.text(text)[0]
        # Not cached, unlike the task: each error differs, and a cache would hold its originals.
        return _found_masked(text)
    except Exception:
        log.exception("sensitive-value detection failed; withholding the text")
        return WITHHELD_TEXT


def to_keep(guard: PrivacyGuard | None, text: str) -> str:
    """Text the gateway writes into a trajectory's notes (a sketch's plan, a summary of the
    history): with placeholders on a sensitive route."""
    if guard is None or not protects(guard.mode):
        return text
    return guard.redactor().text(text)[0]


def to_use(guard: PrivacyGuard | None, text: str) -> str:
    """A note kept by `to_keep`, with the originals back for the edge."""
    if guard is None or not protects(guard.mode):
        return text
    return guard.redactor().restore_text(text)


def audit_content(
    mode: str, redactor: Redactor, messages: list[dict[str, Any]] | None, text: str
) -> tuple[list[dict[str, Any]] | None, str]:
    """The input and output an audit line may hold: on a sensitive route, with the
    trajectory's placeholders in place of its known values."""
    if not protects(mode) or redactor.empty:
        return messages, text
    if messages is not None:
        messages, _ = redactor.messages(messages)
    redacted, _ = redactor.text(text)
    return messages, redacted
