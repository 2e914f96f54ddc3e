"""A request body sent compressed (`Content-Encoding`): decoded before it is read, within the
body's limit.

HTTP lets a client compress what it sends; a gateway that read the compressed bytes as JSON
would answer "not valid JSON", which sends the user looking in the wrong place. gzip and
deflate are decoded (zlib, in the standard library); any other coding gets a 415 that names
the ones accepted. The decoded size is bounded as the body is (`max_body_bytes`: 413), so a
small body that inflates to gigabytes is refused after at most that many bytes of output.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

from router.errors import GatewayError

ACCEPTED = ("gzip", "deflate")
# zlib's window bits: gzip's header and trailer; zlib's (deflate as HTTP means it, RFC 9110).
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def decoded(body: bytes, headers: Mapping[str, str], limit: int) -> bytes:
    """`body` as sent before its `Content-Encoding` (none, `identity`: as it is), at most
    `limit` bytes once decoded; else a 413, or a 415 for a coding not accepted, or a 400 for
    bytes that are not of their coding. A transfer coding besides `chunked` (which the server
    undid: `Transfer-Encoding: gzip, chunked`) is undone first, the same way."""
    transfer = headers.get("transfer-encoding")
    if transfer is not None and transfer.strip().lower() != "chunked":
        body = _undone(body, transfer, limit, "Transfer-Encoding")
    coding = headers.get("content-encoding")
    if coding is None:
        return body
    return _undone(body, coding, limit, "Content-Encoding")


def _undone(body: bytes, codings: str, limit: int, header: str) -> bytes:
    # Codings applied in turn are listed in that order (RFC 9110 8.4): undone last first.
    for name in reversed([part.strip().lower() for part in codings.split(",") if part.strip()]):
        if name in ("identity", "chunked"):
            continue  # `chunked`: a transfer coding the server has undone already
        wbits = _WBITS.get(name)
        if wbits is None:
            raise GatewayError(
                415,
                f"request body's {header} {name!r} is not supported: send it as "
                f"{' or '.join(ACCEPTED)}, or uncompressed",
                code="unsupported_content_encoding",
            )
        body = _inflate(body, wbits, name, limit)
    return body


# gzip allows members one after another (what `cat a.gz b.gz` makes): each is inflated. A
# client has no reason to send more than a few; a body of thousands of empty members is work
# without content, refused past this many.
MAX_MEMBERS = 1024
# Input is fed in pieces of this size: at a member's end zlib copies the input it was given and
# did not use, so feeding a whole body would copy the rest of it once per member.
_PIECE = 16384


def _inflate(body: bytes, wbits: int, name: str, limit: int) -> bytes:
    view = memoryview(body)
    out: list[bytes] = []
    size = 0
    offset = 0
    members = 0
    while True:
        members += 1
        if members > MAX_MEMBERS:
            raise GatewayError(
                400,
                f"request body is not valid {name} (more than {MAX_MEMBERS} members one after another)",
                code="invalid_content_encoding",
            )
        inflater = zlib.decompressobj(wbits)
        while not inflater.eof and offset < len(body):
            piece = view[offset : offset + _PIECE]
            try:
                chunk = inflater.decompress(piece, limit + 1 - size)
            except zlib.error as exc:
                raise GatewayError(
                    400, f"request body is not valid {name} ({exc})", code="invalid_content_encoding"
                ) from exc
            size += len(chunk)
            if size > limit or inflater.unconsumed_tail:
                # Output stopped at the limit (max_length) with input left: over it.
                raise GatewayError(
                    413,
                    f"request body is over the limit of {limit} bytes (max_body_bytes) once decoded ({name})",
                    code="request_too_large",
                )
            out.append(chunk)
            offset += len(piece) - len(inflater.unused_data)
        if not inflater.eof:
            raise GatewayError(
                400, f"request body is not valid {name} (it ends early)", code="invalid_content_encoding"
            )
        if offset >= len(body):
            return b"".join(out)
