"""Process-wide settings a gateway process makes once its gateway has started: made by `tandem
serve` (router/cli/serve.py) and by the tests and benchmarks that run uvicorn themselves, never by
`create_app`, which may be built inside a process it does not own (a test, an embedding)."""

from __future__ import annotations

import ctypes
import gc
import os

# Fewer young-generation collections: a step allocates many short-lived objects, and the
# default threshold (700) made collections a visible share of the time at load.
GC_THRESHOLD = (20_000, 20, 100)


def tune_gc() -> None:
    """Freeze the start-up heap and raise the young generation's threshold. The start-up heap
    never becomes garbage: frozen, the collector does not walk it again and again (full
    collections of it cost tens of milliseconds under load)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


# glibc's malloc gives a large block (>= 128 KB at first) its own mmap and returns freed memory
# at the heap's top to the system past a threshold that follows the largest block freed. A long
# run's step holds several copies of a 400 KB body at once (read, joined, sent) and frees them:
# the heap grows and shrinks every step, and every page is faulted in again (~0.6 ms of CPU a
# step at 400 KB on the pass-through floor, benchmarks/longrun). Fixed thresholds end that:
# blocks under MMAP_THRESHOLD come from the heap, which keeps up to TRIM_THRESHOLD free.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 16 * 1024 * 1024  # the default max_body_bytes; glibc refuses more than 32 MiB
TRIM_THRESHOLD = 64 * 1024 * 1024
MALLOC_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")


def tune_malloc() -> bool:
    """Fix glibc malloc's thresholds (above); False where it is not glibc, or where the
    environment already sets them (an operator's choice stands)."""
    if any(name in os.environ for name in MALLOC_ENV):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # musl, macOS: their allocators do not do this
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def tune_process() -> None:
    """What `tandem serve` makes of each gateway process once its gateway has started."""
    tune_gc()
    tune_malloc()
