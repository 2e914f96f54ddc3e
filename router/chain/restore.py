"""The restore stage (privacy): the cloud's answer to a redacted request with the originals put
back where it quotes our placeholders: a whole answer here (kept, as the cloud said it, for
the content audit), a stream as it is relayed (the restorer the record stage's relay uses). An
inner call's answer a strategy relays was restored when it came back (router/inner.py)."""

from __future__ import annotations

import orjson

from router.privacy.redact import StreamRestorer
from router.protocol.chat import answer_of
from router.step import Replied, Restored, Step

from .stage import Parts, Stage


class Restore(Stage):
    name = "restore"

    def __init__(self, parts: Parts) -> None:
        self._audit = parts.audit

    def answer(self, step: Step) -> None:
        outcome = step.outcome
        if not isinstance(outcome, Replied) or outcome.target != "cloud" or not step.privacy.redacted:
            return
        reply = outcome.reply
        if reply.stream is not None:
            step.restorer = StreamRestorer(step.privacy.answer_redactor())
            return
        if reply.status >= 300:
            return
        parsed = reply.answer if reply.answer is not None else orjson.loads(reply.body)
        # What the cloud said, before the originals are put back (restoring edits the answer in
        # place): the audit keeps placeholders.
        said = answer_of(parsed) if self._audit.wants_content else None
        parsed = step.privacy.answer_redactor().restore_answer(parsed)
        step.restored = Restored(parsed, orjson.dumps(parsed), said)
