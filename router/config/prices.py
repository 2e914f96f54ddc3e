"""Prices of an upstream's tokens, and a provider's prompt-cache rules (what the ledger prices
steps and the all-cloud counterfactual with)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from router.config.base import Strict


class TierPrices(Strict):
    """Dollars per million tokens. `cached_input` defaults to `input` when not given."""

    input: float = Field(0.0, ge=0, description="dollars per million prompt tokens not read from a cache")
    cached_input: float | None = Field(None, ge=0, description="dollars per million cached prompt tokens (null: input)")
    output: float = Field(0.0, ge=0, description="dollars per million completion tokens")

    @property
    def cached_input_or_input(self) -> float:
        return self.input if self.cached_input is None else self.cached_input


class LongContextPrices(TierPrices):
    """Prices that apply instead when a step's prompt is over `above_prompt_tokens`."""

    above_prompt_tokens: int = Field(..., ge=1, description="steps with more prompt tokens use these prices")


class Prices(TierPrices):
    long_context: LongContextPrices | None = None

    def tier(self, prompt_tokens: int) -> TierPrices:
        if self.long_context is not None and prompt_tokens > self.long_context.above_prompt_tokens:
            return self.long_context
        return self


class PromptCacheRules(BaseModel):
    """A provider's prompt-cache rules. Defaults: OpenAI's documented automatic caching:
    prompts of 1024 tokens or more, cache hits in 128-token increments of the prefix shared
    with an earlier request, kept through 5 to 10 minutes of inactivity (600 s here)."""

    model_config = ConfigDict(extra="forbid")

    min_tokens: int = Field(1024, ge=1, description="shortest prefix the provider caches")
    increment: int = Field(128, ge=1, description="cache hits grow in steps of this many tokens")
    ttl_s: float = Field(600.0, gt=0, description="a cached prefix unused this long is gone")

    def cached(self, shared_prefix_tokens: int) -> int:
        """Tokens read from the cache when `shared_prefix_tokens` match an earlier prompt."""
        if shared_prefix_tokens < self.min_tokens:
            return 0
        return self.min_tokens + (shared_prefix_tokens - self.min_tokens) // self.increment * self.increment
