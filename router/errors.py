"""One error type for everything the gateway answers with an error; the API layer maps it to HTTP.

The body is OpenAI-shaped, `{"error": {"message", "type", "code", "param"}}`, because that is
what every client parses.
"""

from __future__ import annotations

from typing import Any

import orjson


class GatewayError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
        policy_refusal: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = dict(headers or {})
        # A route's policy refused the step on purpose (a privacy block): its record's status is
        # `refused`, not `error`, so that the step-error alert sees failures only.
        self.policy_refusal = policy_refusal

    def body(self) -> bytes:
        return error_body(self.message, self.type, self.code, self.param)

    def error(self) -> dict[str, Any]:
        """The OpenAI error object (what `body` wraps in `{"error": ...}`)."""
        return {"message": self.message, "type": self.type, "code": self.code, "param": self.param}


def error_body(message: str, type: str, code: str | None, param: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type, "code": code, "param": param}})


def internal_error(exc: BaseException) -> GatewayError:
    """A 500 for an error the gateway did not expect (logged where it is caught): its type
    only, never its text, which may quote a request's content."""
    return GatewayError(
        500, f"internal error in the gateway: {type(exc).__name__}", type="server_error", code="internal_error"
    )


def bad_request(message: str, *, param: str | None = None, code: str = "invalid_request") -> GatewayError:
    return GatewayError(400, message, code=code, param=param)
