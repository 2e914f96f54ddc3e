"""The record stage: the step's result (relayed plain or streamed, a prepared answer, a
failure) and its one record, made by the answer writer (router/answers.py)."""

from __future__ import annotations

from router.step import Prepared, Replied, Step

from .stage import Parts, Stage


class Record(Stage):
    name = "record"

    def __init__(self, parts: Parts) -> None:
        self._answers = parts.answers

    def answer(self, step: Step) -> None:
        outcome, answers = step.outcome, self._answers
        if isinstance(outcome, Prepared):
            step.result = answers.prepared(step, outcome.answer)
        elif isinstance(outcome, Replied):
            target, fallback, reply = outcome.target, outcome.fallback, outcome.reply
            if reply.stream is not None:
                step.result = answers.stream(step, target, fallback, reply, outcome.prompt_bytes)
            else:
                step.result = answers.plain(step, target, fallback, reply)
        elif outcome is not None:
            step.result = answers.failure(step, outcome.target, outcome.fallback, outcome.failures, outcome.relayed)
