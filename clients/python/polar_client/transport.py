"""Why: `websockets` changed its client API (10.x: `websockets.connect(extra_headers=...)`; 13+:
`websockets.asyncio.client.connect(additional_headers=...)`); Debian 12 ships 10.4. The client
opens its socket through this one function so both work.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

try:  # websockets >= 13
    from websockets.asyncio.client import connect as _connect_new
except ImportError:  # pragma: no cover - depends on the installed version
    _connect_new = None

import websockets

PING_INTERVAL_S = 20.0
OPEN_TIMEOUT_S = 10.0


def connect_websocket(url: str, headers: Mapping[str, str], max_frame_bytes: int) -> Any:
    """An async context manager yielding an open client connection."""
    options = {"max_size": max_frame_bytes, "open_timeout": OPEN_TIMEOUT_S, "ping_interval": PING_INTERVAL_S, "ping_timeout": PING_INTERVAL_S, "close_timeout": 2.0}
    if _connect_new is not None:
        return _connect_new(url, additional_headers=dict(headers), **options)
    return websockets.connect(url, extra_headers=dict(headers), **options)


def handshake_status(err: BaseException) -> Optional[int]:
    """The HTTP status of a refused WebSocket handshake, if `err` is one."""
    status = getattr(err, "status_code", None)  # websockets 10.x InvalidStatusCode
    if isinstance(status, int):
        return status
    response = getattr(err, "response", None)  # websockets 13+ InvalidStatus
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None
