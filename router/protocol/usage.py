"""The tokens of an answer as the upstream reported them (or the gateway estimated them): what
each surface's wire types read and the ledger prices."""

from __future__ import annotations

from typing import Any

from router.records import record

# Past it, not a count: no model reads or writes a billion tokens in one call. The metrics'
# counters are floats, exact to 2**53 in all: one count near that (2**53 was the bound) made
# every later step's tokens and dollars on the series inexact until the process restarted.
MAX_TOKEN_COUNT = 2**30


def token_count(value: Any) -> int | None:
    """A token count as an upstream reports it: a whole number from 0 to `MAX_TOKEN_COUNT` (null
    or absent: 0); anything else None."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 0 <= value <= MAX_TOKEN_COUNT else None


@record(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    # "upstream" when the upstream reported it, "estimated" when the gateway had to guess.
    source: str = "upstream"

    def to_openai(self) -> dict[str, Any]:
        """In OpenAI's `usage` shape, an estimate marked `tandem_estimated` (a key clients ignore)."""
        body: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.cached_tokens:
            body["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.source == "estimated":
            body["tandem_estimated"] = True
        return body

    @classmethod
    def from_openai(cls, usage: Any) -> Usage | None:
        """An upstream's `usage` object; None when it is not one whose counts are whole
        numbers from 0 to `MAX_TOKEN_COUNT` (a broken upstream's, which the step then
        estimates), or when it holds no count at all. Cached tokens are counted at most as many
        as the prompt's."""
        if not isinstance(usage, dict):
            return None
        if usage.get("prompt_tokens") is None and usage.get("completion_tokens") is None:
            # No count under OpenAI's names: Anthropic's (a proxy answering the chat API with its
            # upstream's usage), else none at all. Read as 0 and 0 before, "reported" by the
            # upstream: a step's real tokens went uncounted, and a stream's `usage: {}` after its
            # real usage wrote that over.
            return _anthropic(usage)
        details = usage.get("prompt_tokens_details")
        prompt = token_count(usage.get("prompt_tokens"))
        completion = token_count(usage.get("completion_tokens"))
        cached = token_count(details.get("cached_tokens")) if isinstance(details, dict) else 0
        if prompt is None or completion is None or cached is None:
            return None
        # The cached tokens are of the prompt: more of them (a broken upstream's count) would be
        # charged at the cached price as tokens never sent.
        return cls(prompt_tokens=prompt, cached_tokens=min(cached, prompt), completion_tokens=completion)


def _anthropic(usage: dict[str, Any]) -> Usage | None:
    """Usage in Anthropic's names: the prompt is the uncached input, the cache's reads and its
    writes together; the cached tokens are the reads. None without `input_tokens` and
    `output_tokens` both, or with a count that is not one."""
    if usage.get("input_tokens") is None or usage.get("output_tokens") is None:
        return None
    uncached = token_count(usage.get("input_tokens"))
    completion = token_count(usage.get("output_tokens"))
    read = token_count(usage.get("cache_read_input_tokens"))
    written = token_count(usage.get("cache_creation_input_tokens"))
    if uncached is None or completion is None or read is None or written is None:
        return None
    prompt = uncached + read + written
    if prompt > MAX_TOKEN_COUNT:
        return None
    return Usage(prompt_tokens=prompt, cached_tokens=read, completion_tokens=completion)
