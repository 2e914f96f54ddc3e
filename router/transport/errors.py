"""The errors every transport raises, whatever client is under it: the caller
(`router.upstream`) maps each to one failure kind of an upstream, so it never needs to know
which client made the call."""

from __future__ import annotations


class TransportError(Exception):
    """The connection broke, or the upstream's bytes were not a valid HTTP/1.1 answer."""


class InvalidAnswer(TransportError):
    """The upstream's bytes are not a valid HTTP/1.1 answer (or one past the client's bounds):
    the upstream answered, badly, as opposed to the connection breaking."""


class ConnectFailed(TransportError):
    """No connection could be made (refused, unreachable, name not found, timed out, a TLS
    certificate not trusted, a proxy that refused the tunnel)."""

    def __init__(self, message: str, os_error: OSError | None = None) -> None:
        super().__init__(message)
        self.os_error = os_error
