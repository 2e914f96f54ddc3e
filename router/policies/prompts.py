"""The words the strategies put in front of models: their inner prompts, the hint that carries a
sketch's plan, and the names of the tools they offer the edge by default.

Plain constants, public on purpose: the strategies build their requests from them, and the
simulator (`sim/`) recognises and answers the same requests by them, so both follow a change here.
"""

from __future__ import annotations

# The tools the gateway offers the edge by default (names configurable per route).
from router.config.strategies import ADVISOR_TOOL as ADVISOR_TOOL
from router.config.strategies import DELEGATE_TOOL as DELEGATE_TOOL

# LLM judge (`llm_judge`): asked in words whether the step needs the stronger model.
BINARY = (
    "You decide whether the next step of a software agent needs a stronger, more expensive model. "
    "A small local model handles reading, searching and routine commands; a stronger model is worth "
    "it for edits, writing code, recovering from errors and the final answer. Reply with one word: "
    "YES (needs the stronger model) or NO.\n\n"
)
SCORE = (
    "You rate how much the next step of a software agent needs a stronger, more expensive model, "
    "from 0 (a small local model will do) to 1 (only a strong model will get it right). Edits, "
    "writing code, recovering from errors and the final answer need it most. Reply with the number only.\n\n"
)

# Draft and verify (`draft_verify`): the verifier's question about the edge's draft.
VERIFY = (
    "A software agent is about to take the step below. Rate from 0 to 1 how likely the step is "
    "correct and useful for the task (1 = certainly right). Reply with the number only.\n\n"
)

# Advisor (`advisor`): what the cloud is asked when the edge calls the advisor tool.
ADVICE = (
    "You advise a smaller model that works on a task as an agent. Read the task and its transcript "
    "and give concrete advice for its next steps, in under {words} words.\n\nTASK:\n{task}\n\nTRANSCRIPT:\n{transcript}"
)

# Sketch (`sketch`): the cloud's plan, and the hint that adds it to the edge's system prompt.
PLAN = (
    "Write a short plan, at most {steps} numbered steps, for an agent that will carry out this task "
    "with tools (read files, run commands, edit files). No preamble.\n\nTASK:\n{task}"
)
PLAN_HINT = "A plan written for this task by a stronger model (a hint, not an order):\n"
