"""A request body sent compressed (`Content-Encoding`): decoded before it is read, within the
body's limit.

HTTP lets a client compress what it sends; a gateway that read the compressed bytes as JSON
would answer "not valid JSON", which sends the user looking in the wrong place. gzip and
deflate are decoded (zlib, in the standard library); any other coding gets a 415 that names
the ones accepted. The decoded size is bounded as the body is (`max_body_bytes`: 413), so a
small body that inflates to gigabytes is refused after at most that many bytes of output.

A header may list codings applied in turn (`deflate, gzip`); each is a full pass over the body,
so a list of thousands (each layer a stored deflate block about as large as the body) made the
gateway inflate `max_body_bytes` thousands of times. Real clients send one coding: more than
`MAX_CODINGS` are refused before any is undone (415), and the bytes inflated across all layers
together are bounded by `max_body_bytes`. A large body is decoded off the event loop
(`decoded_off_loop`), so that one client's decompression does not stall every other request.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from router.errors import GatewayError

ACCEPTED = ("gzip", "deflate")
# zlib's window bits: gzip's header and trailer; zlib's (deflate as HTTP means it, RFC 9110).
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


# Codings one header may list (`identity` included, `chunked` not: the server undid it). One is
# what clients send; two covers a body compressed again on its way; more is refused unread.
MAX_CODINGS = 2
# Compressed bodies larger than this are decoded in a worker thread (zlib lets go of the GIL
# while it inflates); smaller ones take less time than the hop to a thread.
OFF_LOOP_BYTES = 1024 * 1024


@dataclass
class _Inflated:
    """Bytes inflated so far for one body, across all its layers: bounded by the body's limit."""

    limit: int
    layers: int = 0  # layers inflated so far, to say so in a refusal
    size: int = 0


def needs_decoding(headers: Mapping[str, str]) -> bool:
    """Whether the body has a coding to undo (or to refuse)."""
    transfer = headers.get("transfer-encoding")
    return "content-encoding" in headers or (transfer is not None and transfer.strip().lower() != "chunked")


async def decoded_off_loop(body: bytes, headers: Mapping[str, str], limit: int) -> bytes:
    """`decoded`, in a worker thread for a body over `OFF_LOOP_BYTES` with a coding to undo."""
    if len(body) > OFF_LOOP_BYTES and needs_decoding(headers):
        return await asyncio.to_thread(decoded, body, headers, limit)
    return decoded(body, headers, limit)


def decoded(body: bytes, headers: Mapping[str, str], limit: int) -> bytes:
    """`body` as sent before its `Content-Encoding` (none, `identity`: as it is), at most
    `limit` bytes once decoded (and at most `limit` bytes inflated across all its layers);
    else a 413, or a 415 for a coding not accepted or for more than `MAX_CODINGS` in one
    header, or a 400 for bytes that are not of their coding. A transfer coding besides
    `chunked` (which the server undid: `Transfer-Encoding: gzip, chunked`) is undone first, the
    same way."""
    transfer = headers.get("transfer-encoding")
    coding = headers.get("content-encoding")
    # Both lists checked before anything is inflated: a refusal costs no decompression.
    transfer_codings = _codings(transfer, "Transfer-Encoding")
    content_codings = _codings(coding, "Content-Encoding")
    inflated = _Inflated(limit)
    body = _undone(body, transfer_codings, inflated, "Transfer-Encoding")
    return _undone(body, content_codings, inflated, "Content-Encoding")


def _codings(value: str | None, header: str) -> list[str]:
    """The codings `header` lists, in the order applied, `chunked` left out; more than
    `MAX_CODINGS` is a 415."""
    if value is None:
        return []
    names = [name for part in value.split(",") if (name := part.strip().lower()) and name != "chunked"]
    if len(names) > MAX_CODINGS:
        raise GatewayError(
            415,
            f"request body's {header} lists {len(names)} codings; at most {MAX_CODINGS} are accepted "
            f"(send it compressed once, as gzip or deflate, or uncompressed)",
            code="unsupported_content_encoding",
        )
    return names


def _undone(body: bytes, names: list[str], inflated: _Inflated, header: str) -> bytes:
    # Codings applied in turn are listed in that order (RFC 9110 8.4): undone last first.
    for name in reversed(names):
        if name == "identity":
            continue
        wbits = _WBITS.get(name)
        if wbits is None:
            raise GatewayError(
                415,
                f"request body's {header} {name!r} is not supported: send it as "
                f"{' or '.join(ACCEPTED)}, or uncompressed",
                code="unsupported_content_encoding",
            )
        body = _inflate(body, wbits, name, inflated)
    return body


# gzip allows members one after another (what `cat a.gz b.gz` makes): each is inflated. A
# client has no reason to send more than a few; a body of thousands of empty members is work
# without content, refused past this many.
MAX_MEMBERS = 1024
# Input is fed in pieces of this size: at a member's end zlib copies the input it was given and
# did not use, so feeding a whole body would copy the rest of it once per member.
_PIECE = 16384


def _inflate(body: bytes, wbits: int, name: str, inflated: _Inflated) -> bytes:
    view = memoryview(body)
    out: list[bytes] = []
    inflated.layers += 1
    # What this layer may still inflate: the body's limit less what the layers before took.
    limit = inflated.limit - inflated.size
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
                raise _inflated_too_much(inflated, name)
            out.append(chunk)
            offset += len(piece) - len(inflater.unused_data)
        if not inflater.eof:
            raise GatewayError(
                400, f"request body is not valid {name} (it ends early)", code="invalid_content_encoding"
            )
        if offset >= len(body):
            inflated.size += size
            return b"".join(out)


def _inflated_too_much(inflated: _Inflated, name: str) -> GatewayError:
    if inflated.layers == 1:
        why = name
    else:  # bytes inflated by its layers, together
        why = f"{name}; {inflated.layers} layers of codings inflate to more than that together"
    return GatewayError(
        413,
        f"request body is over the limit of {inflated.limit} bytes (max_body_bytes) once decoded ({why})",
        code="request_too_large",
    )
