"""Exceptions: every error the service answers becomes one of these, with
the service's code and message kept as they came (a policy that does not
compile names its file, line and column in the message)."""

from __future__ import annotations

import json
from typing import Dict, Optional, Type


class HavenError(Exception):
    """An error from the service, or about reaching it.

    code: the service's error code ("policy_error", "not_found", ...) or one
    of the SDK's own ("start_failed", "protocol").
    status: the HTTP status, 0 when no answer came.
    """

    def __init__(self, message: str, code: str = "error", status: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)


class BadRequest(HavenError):
    """400: the service could not read the request."""


class Forbidden(HavenError):
    """403: another user's service, or a request that would widen a policy."""


class NotFound(HavenError):
    """404: no such sandbox (or it ended), no such file."""


class MethodNotAllowed(HavenError):
    """405."""


class Busy(HavenError):
    """409."""


class TooLarge(HavenError):
    """413: a body or a file over the service's bounds."""


class PolicyError(HavenError):
    """422: the policy does not load or compile (the message keeps FILE:LINE:COL)."""


class LimitError(HavenError):
    """429: one of the service's caps (sandboxes, runs) is reached."""


class InternalError(HavenError):
    """500."""


class Unavailable(HavenError):
    """503: the service is shutting down or cannot make sandboxes now."""


class ConnectionLost(HavenError):
    """The connection to the service broke before the answer was complete."""


class ServiceStartError(HavenError):
    """The service was not running and could not be started."""


class ProtocolError(HavenError):
    """The service's answer was not what the API documents."""


class UnsupportedLanguage(ValueError):
    """run_code() was asked for a language the SDK has no interpreter for."""


_BY_CODE: Dict[str, Type[HavenError]] = {
    "bad_request": BadRequest,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "busy": Busy,
    "too_large": TooLarge,
    "policy_error": PolicyError,
    "limit": LimitError,
    "internal": InternalError,
    "unavailable": Unavailable,
}

_BY_STATUS: Dict[int, str] = {
    400: "bad_request",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "busy",
    413: "too_large",
    422: "policy_error",
    429: "limit",
    500: "internal",
    503: "unavailable",
}


def error_from_response(status: int, body: bytes) -> HavenError:
    """The exception for an error answer: the body's {"error":{"code","message"}}
    when it has one, else the status's code with the body as the message (a
    proxy or a crashed service may answer without JSON)."""
    code: Optional[str] = None
    message: Optional[str] = None
    try:
        doc = json.loads(body.decode("utf-8"))
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict):
            if isinstance(err.get("code"), str):
                code = err["code"]
            if isinstance(err.get("message"), str):
                message = err["message"]
    except (UnicodeDecodeError, ValueError):
        pass
    if code is None:
        code = _BY_STATUS.get(status, "error")
    if message is None:
        text = body.decode("utf-8", "replace").strip()
        message = text[:2000] if text else "HTTP status %d" % status
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = _BY_CODE.get(_BY_STATUS.get(status, ""), HavenError)
    return cls(message, code=code, status=status)
