"""The HTTP/1.1 client's errors: the caller maps each to one failure kind of an upstream."""

from __future__ import annotations


class Http1Error(Exception):
    """The connection broke or the upstream's bytes were not a valid HTTP/1.1 answer."""


class InvalidAnswer(Http1Error):
    """The upstream's bytes are not a valid HTTP/1.1 answer (or one past this client's bounds):
    the upstream answered, badly, as opposed to the connection breaking."""


class ConnectFailed(Http1Error):
    """No connection could be made (refused, unreachable, name not found, timed out)."""

    def __init__(self, message: str, os_error: OSError | None = None) -> None:
        super().__init__(message)
        self.os_error = os_error
