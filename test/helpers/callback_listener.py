"""A trainer-side callback listener as Python trainers write them (http.server, stdlib only).

It answers each POST the way a FastAPI/uvicorn listener does — headers first, then a JSON body —
but sends the body only after a pause, so a client that drops the connection once headers arrive
makes the body write fail here (BrokenPipe / ConnectionResetError), as Polar's Python listeners
logged. One JSON line per request goes to stdout: what was received and whether the answer was
delivered whole.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        payload = json.loads(self.rfile.read(length))
        results = payload.get("results", [])
        group_ids = [r.get("metadata", {}).get("group_id") for r in results]
        body = json.dumps({"ok": True, "padding": "x" * 65536}).encode()
        error = None
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            # The body in two parts with pauses: once the client has closed, the second write fails.
            half = len(body) // 2
            time.sleep(0.3)
            self.wfile.write(body[:half])
            self.wfile.flush()
            time.sleep(0.3)
            self.wfile.write(body[half:])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            error = type(exc).__name__
        record = {
            "task_id": payload.get("task_id"),
            "status": payload.get("status"),
            "results": len(results),
            "group_id_types": sorted({type(g).__name__ for g in group_ids}),
            "write_error": error,
        }
        print(json.dumps(record), flush=True)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"port": server.server_address[1]}), flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
sys.exit(0)
