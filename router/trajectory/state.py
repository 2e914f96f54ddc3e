"""What is kept of a trajectory: its totals, its outcome, and what a new step tells the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judge.record import FIELDS_OF_TYPE, RECORD_FIELDS
from router.ledger import StepRecord
from router.notes import shown
from router.records import record


@record(frozen=True, slots=True)
class StepStart:
    """A new request of a trajectory, as the store is told of it."""

    trajectory_id: str
    fingerprint: str  # a hash of the request body: the same body after an error is a retry
    retry: bool  # the client says it is retrying (x-stainless-retry-count > 0)
    task: str  # the first user message, truncated
    route: str
    namespace: str
    at: float
    # Names this step start in the shared store, so that a start sent twice (a reply lost to a
    # timeout, then written back after an outage) counts once. Empty: the store draws one.
    token: str = ""


@record(frozen=True, slots=True)
class StepSlot:
    step: int  # 1-based index of the step
    attempt: int  # 1, or more when this request retries the step
    # The trajectory as it stood when the step began (before this step's record).
    trajectory: Trajectory | None = None
    # Counted during a shared-store outage for a trajectory this replica had not seen: its pin
    # and constraints may be known to another replica only (privacy routes then fail closed).
    state_unknown: bool = False
    # Counted in memory during a shared-store outage: the index may change when the store is back
    # (router/trajectory/journal.py), and the step's records are renumbered then; a step the store
    # counted never is, whatever its index.
    counted_apart: bool = False


@dataclass(slots=True)
class Outcome:
    success: bool | None
    score: float | None
    labels: dict[str, str]
    at: float

    def as_dict(self) -> dict[str, Any]:
        return {"success": self.success, "score": self.score, "labels": self.labels, "at": self.at}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(data.get("success"), data.get("score"), dict(data.get("labels") or {}), float(data["at"]))


# The totals a step record adds to, by name; the Redis store increments the same fields.
COUNT_FIELDS = (
    "cloud_steps",
    "edge_steps",
    "fallbacks",
    "errors",  # steps that failed for the client (status error)
    "refused",  # steps a policy of the route refused on purpose (status refused: a privacy block)
    "usage_estimated_steps",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "cloud_calls",  # every call to the cloud, inner calls (probe, advisor, plan…) included
    "last_cloud_step",  # not a sum: the index of the last step the cloud answered
    "answered_step",  # not a sum: the highest step whose answer is counted in cloud/edge_steps
    # The run's own record (judge/record.py): per action type, earlier steps whose outcome the
    # harness reported, and of them failed (`StepRecord.failed_before`, counted at a step's first
    # attempt: a retry is given the same results).
    *RECORD_FIELDS,
)
MONEY_FIELDS = ("cost_usd", "counterfactual_usd", "cloud_spend_usd")
NOTE_PREFIX = "n:"


def counts_answer(record: StepRecord, counted_already: bool) -> bool:
    """Whether the record's answer is its step's, in `cloud_steps` or `edge_steps` under the
    target that answered it (`StepRecord.answered_by`): a step refused, failed or cancelled
    counts in neither; a step counts once, at the first of its answered attempts to be recorded
    (`counted_already`: one was): a client's retry after a failure counts, the same body sent
    again after an answer is a repeat. Records of a run's steps may come in any order (a retry
    answered after the next step, writes kept through a store outage), so the count is kept per
    step. The Redis store's RECORD script keeps the same rule."""
    return record.answered_by != "none" and not counted_already


def increments(record: StepRecord) -> tuple[dict[str, int], dict[str, float]]:
    """How one step record changes a trajectory's sums (the answer's counts: `counts_answer`)."""
    usage = record.usage
    counts = {
        "fallbacks": int(record.fallback),
        "errors": int(record.status == "error"),
        "refused": int(record.status == "refused"),
        "usage_estimated_steps": int(usage is not None and usage.source == "estimated"),
        "prompt_tokens": usage.prompt_tokens if usage else 0,
        "cached_tokens": usage.cached_tokens if usage else 0,
        "completion_tokens": usage.completion_tokens if usage else 0,
        "cloud_calls": record.cloud_calls,
    }
    fields = FIELDS_OF_TYPE.get(record.failed_before_action or "")
    if fields is not None and record.failed_before is not None and record.attempt == 1:
        counts[fields[0]] = 1
        counts[fields[1]] = int(record.failed_before)
    money = {
        "cost_usd": record.cost_usd,
        "counterfactual_usd": record.counterfactual_usd,
        "cloud_spend_usd": record.cloud_spend_usd,
    }
    return counts, money


@dataclass(slots=True)
class Trajectory:
    id: str
    namespace: str = ""
    route: str = ""
    task: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    steps: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNT_FIELDS, 0))
    money: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MONEY_FIELDS, 0.0))
    last_fingerprint: str = ""
    last_status: str = ""
    closed_at: float | None = None
    close_reason: str | None = None
    outcome: Outcome | None = None
    # Small per-trajectory memory, one namespace per owner (router/notes.py): a strategy's
    # choice or plan, the pin, the ledger's prompt-cache note. The privacy vault is not here: it
    # grows with the values seen, so it is kept apart and read incrementally (`VaultRead`).
    notes: dict[str, str] = field(default_factory=dict)
    # Entries in the trajectory's vault log when the step began (set by `begin_step` only): a
    # reader that has read as many has nothing to read.
    vault_size: int = 0
    # The steps whose answers are counted (`counts_answer`), in memory; the Redis store keeps a
    # bitmap. Not in `as_dict` nor in a snapshot: only `apply` reads it.
    answered: set[int] = field(default_factory=set)

    def apply(self, record: StepRecord) -> bool:
        """Add the record to the sums; whether its answer counted (`counts_answer`)."""
        counts, money = increments(record)
        for name, value in counts.items():
            self.counts[name] += value
        counted = counts_answer(record, record.step in self.answered)
        if counted:
            self.answered.add(record.step)
            self.counts[f"{record.answered_by}_steps"] += 1
            self.counts["answered_step"] = max(self.counts["answered_step"], record.step)
            if record.answered_by == "cloud":
                self.counts["last_cloud_step"] = max(self.counts["last_cloud_step"], record.step)
        for name, amount in money.items():
            self.money[name] += amount
        self.last_status = record.status
        self.updated_at = max(self.updated_at, record.at)
        return counted

    @property
    def cloud_share(self) -> float:
        answered = self.counts["cloud_steps"] + self.counts["edge_steps"]
        return self.counts["cloud_steps"] / answered if answered else 0.0

    @property
    def savings_usd(self) -> float:
        return self.money["counterfactual_usd"] - self.money["cost_usd"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "route": self.route,
            "task": self.task,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "steps": self.steps,
            **self.counts,
            "cost_usd": self.money["cost_usd"],
            "counterfactual_usd": self.money["counterfactual_usd"],
            "savings_usd": self.savings_usd,
            "cloud_share": self.cloud_share,
            "closed_at": self.closed_at,
            "close_reason": self.close_reason,
            "outcome": self.outcome.as_dict() if self.outcome else None,
            # The privacy vault's notes hold original values: never shown.
            "notes": shown(self.notes),
        }

    def snapshot(self) -> Trajectory:
        return Trajectory(
            id=self.id,
            namespace=self.namespace,
            route=self.route,
            task=self.task,
            created_at=self.created_at,
            updated_at=self.updated_at,
            steps=self.steps,
            counts=dict(self.counts),
            money=dict(self.money),
            last_fingerprint=self.last_fingerprint,
            last_status=self.last_status,
            closed_at=self.closed_at,
            close_reason=self.close_reason,
            outcome=self.outcome,
            notes=dict(self.notes),
            vault_size=self.vault_size,
        )


@record(frozen=True, slots=True)
class VaultRead:
    """Vault entries written since a reader's position in the trajectory's vault log, and the
    position to read from next time. An entry written twice (a key rewritten) may come twice:
    its latest value is the one given. `next` equal to the position asked: nothing to advance
    (nothing new, or an answer from an outage's memory, whose log positions are its own)."""

    entries: list[tuple[str, str]]
    next: int


@record(frozen=True, slots=True)
class LostSteps:
    """A trajectory's steps counted with no record, as the idle sweep finds them
    (router/trajectory/lost.py). Nothing found: nothing to repair, the trajectory may close."""

    # Lost: counted, no record, and begun before the bound (no step of the run can still run).
    steps: tuple[int, ...] = ()
    route: str = ""  # the trajectory's route (its first step's)
    at: float = 0.0  # the trajectory's last step start: the latest a lost step can have begun
    # More than a sweep repairs at once are lost: the rest at the next sweep (it stays open).
    more: bool = False
    # > 0: some step has no record yet but may still be running (or an outage's write-back may
    # still bring its record); look again no sooner than this many seconds. It stays open.
    wait_s: float = 0.0


@record(frozen=True, slots=True)
class ListQuery:
    limit: int = 50
    before: float | None = None  # cursor: only trajectories updated strictly before this time
    since: float | None = None
    until: float | None = None
    route: str | None = None
    namespace: str | None = None  # None: every namespace (an admin); else only this one
