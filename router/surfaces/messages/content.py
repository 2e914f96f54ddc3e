"""A Messages user turn's content blocks as chat-completions messages: text, images (inline
base64 or a URL), documents (a PDF as a chat `file` part, plain text as text) and tool results.

Nothing is dropped without a word: a block that has no chat form is a 400 naming it
(`messages[i].content[j]` and its type). A chat `tool` message carries text only, so a tool
result's images and documents go in the user message that follows the turn's tool messages,
after a note naming the tool call they came from; the tool message says they follow. A tool
result marked `is_error` starts with `ERROR_MARKER`, so the model reads it as a failure.
"""

from __future__ import annotations

from typing import Any

from router.errors import bad_request
from router.protocol.fields import required_problem, required_string, shown, string_field, type_name

# Before the text of a tool result the client marked `is_error` (Anthropic's models are told
# the flag; a chat model sees only the text).
ERROR_MARKER = "[tool error] "


def _refuse(at: str, what: str) -> Exception:
    return bad_request(f"{at}: {what}", param=at)


def _source(block: dict[str, Any], at: str) -> dict[str, Any]:
    source = block.get("source")
    if not isinstance(source, dict):
        where = f"{at}.source"
        raise bad_request(
            required_problem(where, source, f"an object (the {block.get('type')} block's source)"), param=where
        )
    return source


def _image(block: dict[str, Any], at: str) -> dict[str, Any]:
    source = _source(block, at)
    kind = source.get("type")
    if kind == "base64":
        media = string_field(source, "media_type", f"{at}.source")
        data = string_field(source, "data", f"{at}.source")
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
    if kind == "url":
        return {"type": "image_url", "image_url": {"url": required_string(source, "url", f"{at}.source")}}
    raise _refuse(
        at, f"an image whose source is of type {shown(kind)} cannot be sent to a chat model (base64 or url only)"
    )


def _document(block: dict[str, Any], at: str) -> list[dict[str, Any]]:
    """A document as chat parts: a PDF (base64) as a `file` part, text as a text part."""
    source = _source(block, at)
    kind = source.get("type")
    title = block.get("title") if isinstance(block.get("title"), str) else None
    if kind == "base64":
        media = string_field(source, "media_type", f"{at}.source")
        data = string_field(source, "data", f"{at}.source")
        file = {"file_data": f"data:{media};base64,{data}", "filename": title or "document.pdf"}
        return [{"type": "file", "file": file}]
    if kind == "text":
        text = string_field(source, "data", f"{at}.source")
        return [{"type": "text", "text": f"{title}\n\n{text}" if title else text}]
    if kind == "content":
        inner = source.get("content")
        if isinstance(inner, str):
            return [{"type": "text", "text": inner}]
        if not isinstance(inner, list):
            raise _refuse(
                f"{at}.source.content", f"must be a string or an array of text blocks, got {type_name(inner)}"
            )
        return [_text_only(b, f"{at}.source.content[{n}]") for n, b in enumerate(inner)]
    raise _refuse(
        at,
        f"a document whose source is of type {shown(kind)} cannot be sent to a chat model "
        "(base64, text or content only)",
    )


def _text_only(block: Any, at: str) -> dict[str, Any]:
    if isinstance(block, dict) and block.get("type") == "text":
        return {"type": "text", "text": string_field(block, "text", at)}
    kind = block.get("type") if isinstance(block, dict) else type_name(block)
    raise _refuse(at, f"a block of type {shown(kind)} cannot be sent to a chat model here (text only)")


def content_parts(block: Any, at: str) -> list[dict[str, Any]]:
    """The chat content parts of one user content block (not a tool result); a 400 naming it
    when it has none."""
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        raise _refuse(at, f"a content block must be an object, got {type_name(block)}")
    if kind == "text":
        return [{"type": "text", "text": string_field(block, "text", at)}]
    if kind == "image":
        return [_image(block, at)]
    if kind == "document":
        return _document(block, at)
    raise _refuse(at, f"a content block of type {shown(kind)} cannot be sent to a chat model")


def _tool_result(block: dict[str, Any], at: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool result as a tool message (its text) and the parts that must follow it in a user
    message (its images and documents, after a note)."""
    call_id = required_string(block, "tool_use_id", at)
    content = block.get("content")
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for n, item in enumerate(content):
            for part in content_parts(item, f"{at}.content[{n}]"):
                if part["type"] == "text":
                    texts.append(part["text"])
                else:
                    media.append(part)
    elif content is not None:
        raise _refuse(f"{at}.content", f"must be a string or an array of content blocks, got {type_name(content)}")
    text = "\n".join(texts)
    if media:
        note = f"[{len(media)} attachment(s) of this result follow in the next user message]"
        text = f"{text}\n{note}" if text else note
    flag = block.get("is_error")
    if flag is not None and not isinstance(flag, bool):
        # `"is_error": "true"` or 1 read as false would hand the model a failure as a success.
        raise bad_request(f"{at}.is_error must be a boolean, got {type_name(flag)}", param=f"{at}.is_error")
    if flag is True:
        text = ERROR_MARKER + text
    tool = {"role": "tool", "tool_call_id": call_id, "content": text}
    if media:
        media = [{"type": "text", "text": f"Attachments of the result of tool call {call_id}:"}, *media]
    return tool, media


def user_turn(content: Any, where: str) -> list[dict[str, Any]]:
    """A user turn: its tool results become tool messages (in order); the attachments of those
    results, then the turn's other blocks, one user message after them."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    attachments: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for n, block in enumerate(content if isinstance(content, list) else []):
        at = f"{where}[{n}]"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            tool, media = _tool_result(block, at)
            out.append(tool)
            attachments += media
        else:
            parts += content_parts(block, at)
    if attachments or parts:
        out.append({"role": "user", "content": attachments + parts})
    return out
