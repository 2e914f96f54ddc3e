"""An estimate of a Messages request's input tokens (`POST /v1/messages/count_tokens`) without a
tokenizer: what Claude Code sizes its context by before it compacts.

Text counts at `TEXT_CHARS_PER_TOKEN` characters a token, JSON (tool inputs, tool schemas) at
`JSON_CHARS_PER_TOKEN`: ratios measured offline with Anthropic's published (legacy) tokenizer and
tiktoken's o200k_base on code, prose and YAML/JSON (docs/api.md gives the figures
and the command). Each message adds `MESSAGE_TOKENS`; tools add Anthropic's documented tool-use
system prompt. An image counts as Anthropic documents it (width x height / 750, at most
`IMAGE_MAX_TOKENS`) from the size in its header, never as its base64 characters; a PDF counts
`PDF_PAGE_TOKENS` a page. Nothing is downloaded and no tokenizer is loaded.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from typing import Any

import orjson

TEXT_CHARS_PER_TOKEN = 3.6
JSON_CHARS_PER_TOKEN = 3.2
MESSAGE_TOKENS = 4  # the role and the turn's delimiters
TOOL_TOKENS = 8  # a tool's name and the framing around its schema
TOOL_SYSTEM_TOKENS = 346  # Anthropic's tool-use system prompt (tool_choice auto or none)
IMAGE_MAX_TOKENS = 1600  # Anthropic resizes larger images to about 1.15 megapixels
PDF_PAGE_TOKENS = 2000  # a page's text and its image (Anthropic: 1,500 to 3,000 text tokens)
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_HEADER_BYTES = 64 * 1024  # enough of an image's start to find its size


def _text_tokens(chars: int) -> float:
    return chars / TEXT_CHARS_PER_TOKEN


def _json_tokens(value: Any) -> float:
    return len(orjson.dumps(value)) / JSON_CHARS_PER_TOKEN


def _decoded_start(data: str, size: int) -> bytes:
    chunk = data[: size * 4 // 3 // 4 * 4]
    try:
        return base64.b64decode(chunk, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, WebP or JPEG header; None when not found."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        if head[12:16] == b"VP8X":
            return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
        if head[12:16] == b"VP8 ":
            width, height = struct.unpack("<HH", head[26:30])
            return int(width) & 0x3FFF, int(height) & 0x3FFF
        if head[12:16] == b"VP8L" and len(head) >= 25:
            bits = int.from_bytes(head[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        length = int.from_bytes(head[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


def image_tokens(source: Any) -> float:
    """An image block's tokens: from its size where its header says it, else the most."""
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        size = image_size(_decoded_start(source["data"], _HEADER_BYTES))
        if size is not None and size[0] > 0 and size[1] > 0:
            return min(size[0] * size[1] / 750, IMAGE_MAX_TOKENS)
    return IMAGE_MAX_TOKENS


def document_tokens(source: Any) -> float:
    if not isinstance(source, dict):
        return 0.0
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str):
        pdf = _decoded_start(data, len(data))
        return max(len(_PAGE.findall(pdf)), 1) * PDF_PAGE_TOKENS
    if source.get("type") == "text" and isinstance(data, str):
        return _text_tokens(len(data))
    if source.get("type") == "content":
        return content_tokens(source.get("content"))
    return PDF_PAGE_TOKENS  # a file or a URL: at least a page


def content_tokens(content: Any) -> float:
    """The tokens of a message's (or a tool result's) content: a string or content blocks."""
    if isinstance(content, str):
        return _text_tokens(len(content))
    if not isinstance(content, list):
        return 0.0
    total = 0.0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            total += _text_tokens(len(block["text"]))
        elif kind == "image":
            total += image_tokens(block.get("source"))
        elif kind == "document":
            total += document_tokens(block.get("source"))
        elif kind == "tool_use":
            total += _text_tokens(len(str(block.get("name") or ""))) + _json_tokens(block.get("input") or {})
        elif kind == "tool_result":
            total += content_tokens(block.get("content"))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            total += _text_tokens(len(block["thinking"]))
        elif kind != "redacted_thinking":
            total += _json_tokens(block)  # a block of another kind: as much as its JSON
    return total


def input_tokens(body: dict[str, Any]) -> int:
    """The estimated input tokens of a Messages request body."""
    total = content_tokens(body.get("system"))
    turns = body.get("messages")
    for turn in turns if isinstance(turns, list) else []:
        if isinstance(turn, dict):
            total += MESSAGE_TOKENS + content_tokens(turn.get("content"))
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        total += TOOL_SYSTEM_TOKENS
        for tool in tools:
            total += TOOL_TOKENS + (_json_tokens(tool) if isinstance(tool, dict) else 0.0)
    return max(round(total), 1)


# Inline attachments in a chat body's encoding (what the Messages translation makes of images
# and documents): only a body that has one is walked.
_INLINE = re.compile(rb'"(?:url|file_data)":"data:')


def _data_tokens(url: str, kind: str) -> float:
    """An inline attachment's tokens: a `data:` URL's image by its size, a PDF by its pages."""
    data = url.partition(",")[2]
    if kind == "file":
        return document_tokens({"type": "base64", "data": data})
    return image_tokens({"type": "base64", "data": data})


def encoded_tokens(encoded: bytes | memoryview, chat: dict[str, Any]) -> int:
    """A chat request's input tokens from its encoding: about 4 bytes a token (no second
    encoding of the history), except inline images and files, counted as `input_tokens`
    counts them rather than by their base64 (a screenshot would be ~60,000 tokens)."""
    total = len(encoded) / 4
    if _INLINE.search(encoded) is None:  # on the buffer itself: no copy of the request
        return max(int(total), 1)
    for message in chat.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            holder = part.get("image_url") if part.get("type") == "image_url" else part.get("file")
            key = "url" if part.get("type") == "image_url" else "file_data"
            value = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(value, str) and value.startswith("data:"):
                total += _data_tokens(value, str(part.get("type"))) - len(value) / 4
    return max(int(total), 1)
