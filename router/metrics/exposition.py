"""The Prometheus text format for `/metrics`, written fast enough for a 100-route gateway.

prometheus-client's own path rebuilds and re-escapes every label set on every scrape, and in
multiprocess mode re-parses every key of every worker's file as JSON: ~80 ms (one process)
and ~200 ms (four workers) for 100 routes. These writers make each series' name-and-labels
text once and afterwards only read numbers: a few milliseconds.

Output equals prometheus-client's (`generate_latest`, with `MultiProcessCollector` in
multiprocess mode) except that the `_created` series are left out (the text format only turns
them into extra gauges); tests hold the two to that. Both read prometheus-client's private
layout (metric children; the memory-mapped file format), which is why `Metrics.exposition`
falls back to the library if a writer fails.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
from prometheus_client.utils import floatToGoString

# prometheus-client's own number format (Go's), so the text matches what it writes.
number_text = cast(Callable[[float], str], floatToGoString)
_INT = struct.Struct("i")
_TWO_DOUBLES = struct.Struct("dd")


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _braced(pairs: Iterable[tuple[str, str]]) -> str:
    inner = ",".join(f'{name}="{_escape(value)}"' for name, value in sorted(pairs))
    return f"{{{inner}}}" if inner else ""


def exposed_name(name: str, kind: str) -> str:
    return name + "_total" if kind == "counter" else name


def header(name: str, kind: str, documentation: str) -> str:
    doc = documentation.replace("\\", r"\\").replace("\n", r"\n")
    shown = exposed_name(name, kind)
    return f"# HELP {shown} {doc}\n# TYPE {shown} {kind}\n"


def _histogram_prefixes(name: str, pairs: list[tuple[str, str]], bounds: Iterable[str]) -> list[str]:
    """Bucket lines (in `bounds` order), then `_count`, then `_sum`."""
    plain = _braced(pairs)
    buckets = [f"{name}_bucket{_braced([*pairs, ('le', bound)])} " for bound in bounds]
    return [*buckets, f"{name}_count{plain} ", f"{name}_sum{plain} "]


class RegistryWriter:
    """One process: the text straight from the metrics' children."""

    def __init__(self, families: list[Any]) -> None:
        self._families = families
        self._headers = [header(f._name, f._type, f._documentation) for f in families]
        self._prefixes: dict[tuple[int, tuple[str, ...]], list[str]] = {}

    @staticmethod
    def _series_prefixes(family: Any, labelvalues: tuple[str, ...]) -> list[str]:
        pairs = list(zip(family._labelnames, labelvalues, strict=True))
        if family._type == "histogram":
            return _histogram_prefixes(family._name, pairs, [number_text(b) for b in family._upper_bounds])
        return [f"{exposed_name(family._name, family._type)}{_braced(pairs)} "]

    def render(self) -> bytes:
        out: list[str] = []
        for index, family in enumerate(self._families):
            out.append(self._headers[index])
            children: list[tuple[tuple[str, ...], Any]]
            if family._labelnames:
                with family._lock:
                    children = [(tuple(values), child) for values, child in family._metrics.items()]
            else:
                children = [((), family)]
            for labelvalues, child in children:
                prefixes = self._prefixes.get((index, labelvalues))
                if prefixes is None:
                    prefixes = self._prefixes[(index, labelvalues)] = self._series_prefixes(family, labelvalues)
                if len(prefixes) == 1:
                    out.append(f"{prefixes[0]}{number_text(child._value.get())}\n")
                    continue
                total = 0.0
                for prefix, bucket in zip(prefixes, child._buckets, strict=False):
                    total += bucket.get()
                    out.append(f"{prefix}{number_text(total)}\n")
                out.append(f"{prefixes[-2]}{number_text(total)}\n")
                out.append(f"{prefixes[-1]}{number_text(child._sum.get())}\n")
        return "".join(out).encode()


@dataclass(slots=True)
class _Group:
    """One exposed series (a histogram's buckets, count and sum are one group)."""

    family: str
    kind: str
    pairs: list[tuple[str, str]]
    bounds: dict[float, int] = field(default_factory=dict)  # bucket bound -> slot
    sum_slot: int = -1
    value_slot: int = -1
    prefixes: list[str] | None = None


@dataclass(slots=True)
class _File:
    parsed_until: int = 8
    size: int = 0
    entries: list[tuple[int, int]] = field(default_factory=list)  # (value offset, slot)


class FilesWriter:
    """Multiprocess mode: the text from every worker's memory-mapped files. A key is parsed
    the first time it is seen in a file; later scrapes read only the numbers."""

    def __init__(self, folder: Path, families: list[Any]) -> None:
        self._folder = folder
        self._headers = {f._name: header(f._name, f._type, f._documentation) for f in families}
        self._order = [f._name for f in families]
        self._files: dict[str, _File] = {}
        self._slots: dict[tuple[str, bytes], int] = {}  # (gauge mode or type, key) -> slot
        self._slot_group: list[_Group] = []
        self._groups: dict[tuple[str, tuple[tuple[str, str], ...], str], _Group] = {}

    def _slot(self, kind: str, mode: str, pid: str, key: bytes) -> int:
        slot_key = (f"{mode}:{pid}" if mode in ("all", "liveall") else mode or kind, key)
        slot = self._slots.get(slot_key)
        if slot is not None:
            return slot
        family, name, labels, _doc = orjson.loads(key)
        pairs = sorted((str(k), str(v)) for k, v in labels.items() if k != "le")
        if mode in ("all", "liveall"):
            pairs = sorted([*pairs, ("pid", pid)])
        group_key = (family, tuple(pairs), mode)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = _Group(family, kind, pairs)
        slot = len(self._slot_group)
        self._slot_group.append(group)
        self._slots[slot_key] = slot
        if kind == "histogram" and "le" in labels:
            group.bounds[float(labels["le"])] = slot
        elif kind == "histogram" and name.endswith("_sum"):
            group.sum_slot = slot
        else:
            group.value_slot = slot
        return slot

    def _scan(self, path: str, data: bytes, kind: str, mode: str, pid: str) -> _File:
        used = _INT.unpack_from(data, 0)[0]
        state = self._files.get(path)
        if state is None or used < state.parsed_until or len(data) < state.size:
            state = self._files[path] = _File()  # new, or replaced by a process with the same pid
        state.size = len(data)
        position = state.parsed_until
        while position < used:
            length = _INT.unpack_from(data, position)[0]
            key = data[position + 4 : position + 4 + length]
            position += 4 + length + (8 - (length + 4) % 8)
            state.entries.append((position, self._slot(kind, mode, pid, key)))
            position += 16
        state.parsed_until = position
        return state

    def render(self) -> bytes:
        values: dict[int, float] = {}
        stamps: dict[int, float] = {}
        for entry in os.scandir(self._folder):
            if not entry.name.endswith(".db"):
                continue
            parts = entry.name[:-3].split("_")
            kind, mode, pid = parts[0], parts[1] if len(parts) == 3 else "", parts[-1]
            try:
                with open(entry.path, "rb") as file:
                    data = file.read()
            except FileNotFoundError:  # a dead worker's live gauges, removed since the listing
                continue
            state = self._scan(entry.path, data, kind, mode, pid)
            for offset, slot in state.entries:
                value, stamp = _TWO_DOUBLES.unpack_from(data, offset)
                self._merge(values, stamps, slot, value, stamp, mode)
        return self._text(values)

    @staticmethod
    def _merge(
        values: dict[int, float], stamps: dict[int, float], slot: int, value: float, stamp: float, mode: str
    ) -> None:
        if slot not in values:
            values[slot], stamps[slot] = value, stamp
        elif mode in ("max", "livemax"):
            values[slot] = max(values[slot], value)
        elif mode in ("min", "livemin"):
            values[slot] = min(values[slot], value)
        elif mode in ("mostrecent", "livemostrecent"):
            if stamp > stamps[slot]:
                values[slot], stamps[slot] = value, stamp
        else:  # counters, histograms, sum and livesum gauges
            values[slot] += value

    def _text(self, values: dict[int, float]) -> bytes:
        by_family: dict[str, list[_Group]] = {}
        for group in self._groups.values():
            by_family.setdefault(group.family, []).append(group)
        out: list[str] = []
        for name in [*self._order, *sorted(set(by_family) - set(self._order))]:
            groups = by_family.get(name)
            if not groups:
                continue
            kind = groups[0].kind
            out.append(self._headers.get(name) or header(name, kind, ""))
            for group in groups:
                self._group_text(group, values, out)
        return "".join(out).encode()

    @staticmethod
    def _group_text(group: _Group, values: dict[int, float], out: list[str]) -> None:
        if group.kind != "histogram":
            if group.value_slot in values:
                if group.prefixes is None:
                    group.prefixes = [f"{exposed_name(group.family, group.kind)}{_braced(group.pairs)} "]
                out.append(f"{group.prefixes[0]}{number_text(values[group.value_slot])}\n")
            return
        bounds = sorted(group.bounds)
        if group.prefixes is None or len(group.prefixes) != len(bounds) + 2:
            group.prefixes = _histogram_prefixes(group.family, group.pairs, [number_text(b) for b in bounds])
        total = 0.0
        for prefix, bound in zip(group.prefixes, bounds, strict=False):
            total += values.get(group.bounds[bound], 0.0)
            out.append(f"{prefix}{number_text(total)}\n")
        out.append(f"{group.prefixes[-2]}{number_text(total)}\n")
        if group.sum_slot in values:
            out.append(f"{group.prefixes[-1]}{number_text(values[group.sum_slot])}\n")
