"""An output file that appears whole or not at all.

A command that streams its output (rows imported, steps exported, audit lines expanded) and then
fails (a file it cannot read, a gateway that does not answer, Ctrl-C) must not leave a file at
the output path: an empty or cut file looks like a finished one to the next command, and
opening the path for writing up front would already have destroyed the file a previous run
wrote there. The lines are written to a hidden file beside the output and renamed over it only
once all are written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def replaced_on_success(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s content into: renamed to `path` when the block ends
    without an exception, removed when it raises (KeyboardInterrupt too)."""
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:
        # Named by the file asked for, not by the temporary one.
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
        # mkstemp makes the file private (0600); an output gets the mode an ordinary open gives.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        try:
            os.replace(temporary, path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
