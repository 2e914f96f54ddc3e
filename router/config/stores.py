"""Where state is kept: trajectories (memory, Redis, the outage journal), the audit log and the
privacy vault."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from router.config.base import Strict


class TrajectorySettings(Strict):
    """How trajectories are kept, closed and identified."""

    # A trajectory with no step for this long is closed and its per-run figures recorded.
    idle_close_s: float = Field(1800.0, gt=0)
    # How long a trajectory's state is kept after its last step (memory and Redis).
    ttl_s: float = Field(7 * 24 * 3600.0, gt=0)
    # Trajectories kept in memory (their totals, notes and pins; records are bounded below).
    max_in_memory: int = Field(20_000, ge=1)
    # Step records the in-memory store keeps, packed (~300 bytes each, more with features): all
    # trajectories' together, and one trajectory's; past it the least recently recorded lose theirs.
    record_bytes: int = Field(128 * 1024 * 1024, ge=0)
    trajectory_record_bytes: int = Field(
        4 * 1024 * 1024, ge=0, description="step records the memory store keeps for one trajectory (its first stay)"
    )
    # Last-resort identification by message history when a request carries no session id.
    stitch_by_history: bool = True
    # Steps counted during a Redis outage whose writes (the step, its record, notes…) are kept for
    # write-back; past this many, new writes are dropped and counted
    # (tandem_store_outage_dropped_total). A kept step takes ~1.3 KB of memory (more with big notes).
    outage_journal_max: int = Field(100_000, ge=1)
    outage_journal_dir: Path | None = Field(
        None,
        description="Folder where each worker also keeps the outage journal on disk (one locked file a worker, "
        "sealed with a key derived from the vault key), so that a worker stopped mid-outage (SIGKILL, SIGTERM, "
        "a crash) loses no answered step: the next start on the folder writes it back. Put it on a persistent "
        "volume; null: in memory only.",
    )
    outage_journal_max_bytes: int = Field(
        256 * 1024 * 1024,
        ge=64 * 1024,
        description="Bytes one worker's journal file may hold; past it new writes stay in memory only, counted "
        'in tandem_journal_lost_total{reason="file_full"} and logged.',
    )
    outage_journal_sync_ms: float = Field(
        5.0,
        ge=0,
        le=1000,
        description="Group commit: the journal file is synced at most this often (milliseconds); an answer given "
        "during an outage waits for the sync that covers its step.",
    )
    # Trajectory ids kept in Redis' `recent` index (listing, export); the oldest leave first.
    max_listed: int = Field(1_000_000, ge=1)
    lost_step_after_s: float | None = Field(
        None,
        gt=0,
        description="With Redis: a step counted with no record (its worker was killed, or its start reached Redis "
        "after the gateway refused it) is recorded lost, status error, when the idle sweep finds its trajectory "
        "idle and this long has passed since the trajectory's last step start and since any replica began "
        "writing back an outage's journal; a trajectory with such a step stays open until then. null: the "
        "longest a step can run by the upstreams' timeouts (with the defaults ~28 min, under idle_close_s). Set "
        "it below that and a step still running may be recorded lost (its own record is then kept too)",
    )


class AuditSettings(Strict):
    """The audit log: one JSON line per step, written off the request path."""

    mode: Literal["off", "metadata", "content"] = Field(
        "off", description="metadata: the step record; content: also what the cloud received and answered"
    )
    path: Path = Field(Path("tandem-audit.jsonl"), description="the log file")
    max_bytes: int = Field(100 * 1024 * 1024, ge=1024, description="the file rotates at this size")
    backups: int = Field(5, ge=0, description="rotated files kept")
    # Memory of the lines waiting for the writer (while a disk is full, say): they wait
    # serialised and count as the bytes they hold, the batch being retried included; beyond it
    # new lines are dropped and counted (tandem_audit_lines{outcome="dropped"}).
    max_queue_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    # Content mode: the last input of each open trajectory kept to write the next as a delta.
    delta_memory_bytes: int = Field(64 * 1024 * 1024, ge=0)


class VaultSettings(Strict):
    """The privacy vault: the original values behind placeholders, sealed."""

    # The environment variable holding the key that seals the privacy vault's originals
    # (32 bytes, base64); required when redis_url is set (router/privacy/vault.py).
    key_env: str = "TANDEM_VAULT_KEY"
    # Per process: what the privacy stage learned of each trajectory's messages (their redacted
    # form, the vault opened), so a step costs its new messages, not its history (bytes).
    memory_bytes: int = Field(64 * 1024 * 1024, ge=0)
