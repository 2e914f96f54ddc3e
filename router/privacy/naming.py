"""Placeholders for a trajectory's values: each new value gets the next free number of its kind
(`[EMAIL_3]`), never one the vault, the text or the same batch holds, and a value another
replica named first keeps that replica's name (guard.py writes them to the vault).
"""

from __future__ import annotations

import hashlib

from router.notes import VAULT_ID as IDS
from router.notes import VAULT_VALUE as VAULT
from router.privacy.memo import TrajectoryMemo
from router.privacy.redact import kind_of
from router.privacy.vault import VaultCipher
from router.trajectory.store import TrajectoryStore


def value_id(cipher: VaultCipher | None, value: str) -> str:
    """A value's id in the vault: the cipher's keyed hash, a plain one without a cipher."""
    return hashlib.blake2b(value.encode(), digest_size=10).hexdigest() if cipher is None else cipher.value_id(value)


def know(entry: TrajectoryMemo, placeholder: str, value: str) -> None:
    """Add a value and its placeholder to the trajectory's memory."""
    before = entry.matcher.placeholder.get(value)
    if before == placeholder:
        return
    if before is not None:
        entry.generation += 1  # a known value renamed: what was redacted with the old name goes
    entry.matcher.add(value, placeholder)
    kind = kind_of(placeholder)
    entry.kinds[kind] = entry.kinds.get(kind, 0) + 1


def next_name(entry: TrajectoryMemo, kind: str, reserved: set[str], taken: set[str], after: dict[str, int]) -> str:
    """The next number of `kind` that neither the vault, the text nor this batch has taken."""
    number = after.get(kind, entry.kinds.get(kind, 0) + 1)
    while (
        (name := f"[{kind}_{number}]") in entry.matcher.value_of
        or name in entry.unopened
        or name in reserved
        or name in taken
    ):
        number += 1
    taken.add(name)
    after[kind] = number + 1
    return name


async def rename_clashes(
    store: TrajectoryStore,
    trajectory_id: str,
    entry: TrajectoryMemo,
    kinds: list[str],
    ids: list[str],
    names: list[str],
    placeholders: list[str],
    reserved: set[str],
    taken: set[str],
    after: dict[str, int],
) -> None:
    """A value another replica named since this step read the vault keeps that name, which
    may be the one this batch gave another value: that value (whose id entry this batch just
    wrote) is named again, one more round trip, only then."""
    owner: dict[str, int] = {}
    clashing: list[int] = []
    for index, placeholder in enumerate(placeholders):
        first = owner.setdefault(placeholder, index)
        if first != index:
            clashing += [i for i in (first, index) if placeholders[i] == names[i]]
    if not clashing:
        return
    taken.update(placeholders)
    for index in clashing:
        names[index] = placeholders[index] = next_name(entry, kinds[index], reserved, taken, after)
    await store.vault_notes(trajectory_id, [(ids[i], names[i]) for i in clashing])


async def allocate(
    store: TrajectoryStore,
    trajectory_id: str,
    entry: TrajectoryMemo,
    cipher: VaultCipher | None,
    new: dict[str, str],
    reserved: set[str],
) -> list[tuple[str, str, str, str]]:
    """Give each new value (value -> kind) a placeholder and keep it in the vault: two writes
    for them all (the placeholders, then the sealed values), whatever their number. Returns
    each value's (value, id key, placeholder, sealed value) for the caller's memory."""
    values = list(new)
    taken: set[str] = set()
    after: dict[str, int] = {}  # kind -> the number after the last one named here
    names = [next_name(entry, new[value], reserved, taken, after) for value in values]
    ids = [IDS + value_id(cipher, value) for value in values]
    # keep_first: a value another replica named already keeps its name.
    placeholders = await store.vault_notes(trajectory_id, list(zip(ids, names, strict=True)), keep_first=True)
    kinds = [new[value] for value in values]
    await rename_clashes(store, trajectory_id, entry, kinds, ids, names, placeholders, reserved, taken, after)
    stored = [
        value if cipher is None else cipher.seal(trajectory_id, placeholder, value)
        for value, placeholder in zip(values, placeholders, strict=True)
    ]
    await store.vault_notes(
        trajectory_id, [(VAULT + p, sealed) for p, sealed in zip(placeholders, stored, strict=True)]
    )
    return list(zip(values, ids, placeholders, stored, strict=True))
