"""A coordinator stand-in for the client's unit tests: a real WebSocket server on 127.0.0.1 that
plays a script per connection and records every frame the client sends. (The live cluster tests
in test_live.py run against the real coordinator.)"""

import asyncio
import http
import json

import websockets

try:  # websockets >= 13
    from websockets.asyncio.server import serve as _serve_new
    from websockets.http11 import Response as _Response
    from websockets.datastructures import Headers as _Headers
except ImportError:  # websockets 10.x
    _serve_new = None


class StandIn:
    """`script(conn, hello)` is awaited for each connection once its hello arrived; `conn.send`,
    `conn.close` and `conn.received` (frames of this connection) drive it."""

    def __init__(self, script, token="t"):
        self.script = script
        self.token = token
        self.received = []  # every frame, all connections
        self.connections = 0
        self.refused = 0
        self._server = None
        self.url = None

    async def __aenter__(self):
        if _serve_new is not None:
            self._server = await _serve_new(self._handle, "127.0.0.1", 0, process_request=self._check_new)
        else:
            self._server = await websockets.serve(self._handle, "127.0.0.1", 0, process_request=self._check_legacy)
        port = next(iter(self._server.sockets)).getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc):
        self._server.close()
        await self._server.wait_closed()

    def _authorised(self, headers):
        return headers.get("authorization") == f"Bearer {self.token}"

    async def _check_legacy(self, path, headers):
        if not self._authorised(headers):
            self.refused += 1
            return (http.HTTPStatus.UNAUTHORIZED, [("content-length", "12")], b"unauthorized")
        return None

    def _check_new(self, connection, request):
        if not self._authorised(request.headers):
            self.refused += 1
            return _Response(401, "Unauthorized", _Headers(), b"unauthorized")
        return None

    async def _handle(self, ws, *path):
        self.connections += 1
        conn = Connection(ws, self)
        hello = json.loads(await ws.recv())
        self.received.append(hello)
        conn.received.append(hello)
        reader = asyncio.ensure_future(conn.read())
        script = asyncio.ensure_future(self.script(conn, hello))
        try:
            # The script ends the connection by returning (the client may still talk) or the
            # client does by closing (the script is then cancelled).
            await asyncio.wait({reader, script}, return_when=asyncio.FIRST_COMPLETED)
            if script.done():
                script.result()
                await reader
        except websockets.ConnectionClosed:
            pass
        finally:
            reader.cancel()
            script.cancel()

    def frames(self, kind):
        return [f for f in self.received if f["type"] == kind]


class Connection:
    def __init__(self, ws, standin):
        self.ws = ws
        self.standin = standin
        self.received = []
        self.arrived = asyncio.Event()

    async def read(self):
        async for raw in self.ws:
            frame = json.loads(raw)
            self.received.append(frame)
            self.standin.received.append(frame)
            self.arrived.set()

    async def send(self, frame):
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def welcome(self, hello, policy_version=0):
        await self.send({"type": "welcome", "protocol_version": 1, "trainer_id": hello["trainer_id"], "policy_version": policy_version, "unacked": 0})

    async def until(self, predicate, timeout=10):
        async def wait():
            while not predicate(self.received):
                self.arrived.clear()
                await self.arrived.wait()
        await asyncio.wait_for(wait(), timeout)

    async def close(self, code=1000):
        await self.ws.close(code)
