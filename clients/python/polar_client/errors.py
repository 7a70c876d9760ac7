"""Why: one small error type with closed codes, so a trainer can tell a refused request from a lost
connection without reading messages."""

from __future__ import annotations

from typing import Optional

ERROR_CODES = (
    # The coordinator refused the request (its `error` frame; `remote_code` says why).
    "rejected",
    # The token was refused at the handshake (HTTP 401/403); the client stops.
    "unauthorized",
    # The connection dropped before the answer came; the request may or may not have taken effect.
    "connection_lost",
    # A frame did not match the trainer protocol.
    "protocol",
    # No answer within the caller's timeout.
    "timeout",
    # The client was closed.
    "closed",
)


class PolarClientError(Exception):
    def __init__(self, code: str, message: str, remote_code: Optional[str] = None):
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        #: The coordinator's own code for a "rejected" request (e.g. not_found, bad_request, conflict).
        self.remote_code = remote_code
