"""The keys of a trajectory's notes: one namespace per owner, built here and nowhere else.

A trajectory's notes are small strings kept with it (in memory or in Redis, shared by replicas).
Several parts of the gateway keep notes there; each writes only under its own prefix, so that
none can overwrite another's (a strategy cannot clobber the pin or the vault):

  strategy:<strategy>:<name>  a strategy's memory (task routing's target, a sketch's plan)
  context:<name>              the `summary` context mode's summary and how many steps it covers
  pin                         "edge": the trajectory is pinned to the edge (privacy)
  ledger:<name>               the ledger's prompt-cache note
  shadow:<step>               shadow labelling's verdict on one step
  pool:home                   the edge replica (its base URL) the trajectory is kept on
  pool:spills                 how many of its steps went to the cloud because the edge was full
  vault:<name>                the privacy vault (router/privacy/guard.py): never shown; kept
                              in the vault's own store apart from the notes (a step's start does
                              not read it), all but `vault:scanned`

Notes written before this layout (keys without an owner: `pinned`, `task_target`, `plan`,
`pii:…`) are read under their new names by `upgraded`, so that a trajectory running across an
upgrade keeps its pin, its vault and its strategy's choice. Trajectories expire (`ttl_s`), so
the old names can be dropped one TTL after every replica runs this layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

PIN = "pin"
SHADOW = "shadow:"
POOL_HOME = "pool:home"
POOL_SPILLS = "pool:spills"
VAULT = "vault:"
# The privacy vault's notes (router/privacy/guard.py says what each holds).
VAULT_VALUE = VAULT + "value:"  # vault:value:<placeholder> -> the original value, sealed
VAULT_ID = VAULT + "id:"  # vault:id:<value hash> -> its placeholder
VAULT_OUT = VAULT + "out:"  # vault:out:<placeholder> -> "1": the value reached the cloud
VAULT_SCANNED = VAULT + "scanned"  # `N:digest`: the first N messages scanned (router/privacy/scanned.py)


def strategy(name: str, key: str) -> str:
    """A note of the strategy `name` (the route's `strategy:` value)."""
    return f"strategy:{name}:{key}"


def context(key: str) -> str:
    return f"context:{key}"


def ledger(key: str) -> str:
    return f"ledger:{key}"


def shadow(step: int) -> str:
    return f"{SHADOW}{step}"


def owner_of(key: str) -> str:
    """The owner's namespace of a key: `strategy`, `context`, `pin`, `ledger`, `shadow`, `pool`, `vault`."""
    return key.partition(":")[0]


def shown(notes: Mapping[str, str]) -> dict[str, str]:
    """The notes a trajectory's reader may see: all but the vault's (it holds original values)."""
    return {key: value for key, value in notes.items() if not key.startswith(VAULT)}


# The keys of the flat layout that came before, by their new names.
_LEGACY = {
    "pinned": PIN,
    "task_target": strategy("task", "target"),
    "plan": strategy("sketch", "plan"),
    "summary": context("summary"),
    "summary_covers": context("summary_covers"),
    "cache_prefix": ledger("cache_prefix"),
    "pii_scanned": VAULT_SCANNED,
}
_LEGACY_PREFIXES = (("pii:", VAULT_VALUE), ("pii_id:", VAULT_ID), ("pii_out:", VAULT_OUT))


def upgraded(key: str) -> str:
    """The key under this layout, for a key written by the flat layout (else the key itself)."""
    if ":" not in key:
        return _LEGACY.get(key, key)
    for old, new in _LEGACY_PREFIXES:
        if key.startswith(old):
            return new + key[len(old) :]
    return key


def read(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Notes as stored, under this layout's keys; a key of this layout wins over an old one."""
    notes: dict[str, str] = {}
    current: dict[str, str] = {}
    for key, value in items:
        new = upgraded(key)
        (current if new == key else notes)[new] = value
    notes.update(current)
    return notes
