"""What a command says when the user's input or surroundings are wrong: one line on standard
error and a non-zero exit, never a traceback. A bug still raises (and shows its traceback)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from router.config.base import ConfigError

# The modules only an extra installs, and that extra.
EXTRAS = {
    "sklearn": "train",
    "skl2onnx": "train",
    "onnx": "train",
    "matplotlib": "train",
}


def say(message: str) -> None:
    print(f"tandem: {message}", file=sys.stderr, flush=True)


def missing_extra(error: ModuleNotFoundError) -> str | None:
    top = (error.name or "").partition(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    package = "scikit-learn" if top == "sklearn" else top
    return f"this command needs {package}, which the [{extra}] extra installs: pip install 'tandem[{extra}]'"


def run_friendly(command: Callable[[], int]) -> int:
    """Run a command; a user's error becomes one line and exit 2 (bad input) or 1 (something
    it needed did not answer)."""
    import httpx
    import redis.exceptions

    try:
        return command()
    except ConfigError as error:
        say(str(error))
        return 2
    except ModuleNotFoundError as error:
        message = missing_extra(error)
        if message is None:
            raise
        say(message)
        return 2
    except httpx.HTTPStatusError as error:
        status = error.response.status_code
        hint = " (give an admin key: --api-key or TANDEM_ADMIN_KEY)" if status in (401, 403) else ""
        say(f"{error.request.url} answered {status} {error.response.reason_phrase}{hint}")
        return 1
    except httpx.TransportError as error:
        say(f"cannot reach {error.request.url}: {error or type(error).__name__}")
        return 1
    except (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError) as error:
        say(f"{error.filename}: {error.strerror}")
        return 2
    except (ConnectionError, redis.exceptions.ConnectionError) as error:
        say(f"cannot connect: {error}")
        return 1
    except OSError as error:
        if error.filename is None:
            raise
        say(f"{error.filename}: {error.strerror}")  # a file exists where a folder must be, a full disk…
        return 2
    except UnicodeDecodeError as error:
        say(f"a file is not UTF-8 text ({error.reason} at byte {error.start}): is it the file meant?")
        return 2
    except json.JSONDecodeError as error:
        say(f"not valid JSON ({error})")
        return 2
    except KeyboardInterrupt:
        say("interrupted")
        return 130
