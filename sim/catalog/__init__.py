"""The demo's built-in tasks: small repository chores of 5 to 9 steps each, in the order the demo
takes them. Each has a buggy variant of its edits, the kind of slip a small model makes.
"""

from __future__ import annotations

from sim.catalog.changes import ADD_SLUGIFY, BUMP_TIMEOUT, RENAME
from sim.catalog.fixes import FIX_MEDIAN, FIX_PAGINATION, MISSING_KEY
from sim.tasks import Task

CATALOG: tuple[Task, ...] = (FIX_MEDIAN, ADD_SLUGIFY, BUMP_TIMEOUT, FIX_PAGINATION, RENAME, MISSING_KEY)
