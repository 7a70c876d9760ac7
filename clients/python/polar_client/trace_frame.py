"""Why: the coordinator sends a result as a binary *trace frame* when the trainer asks for it — a
small JSON header plus the traces' token ids, loss masks and logprobs packed (protocol/trace-frame.ts,
layout in docs/coordinator.md) — so nobody writes or parses them as JSON numbers. This module is the
Python side of that layout, standard library only: it checks a frame's structure (untrusted input:
every length against the bytes there are) and puts the arrays back into the header's traces, so the
rest of the client reads exactly what a JSON frame would have given it.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from array import array
from typing import Any, Union

from .errors import PolarClientError

#: "PTF1", little-endian: the first four bytes of every trace frame.
TRACE_FRAME_MAGIC = 0x31465450
#: The per-token arrays of a trace, in the order of the blob's length table.
TRACE_ARRAY_KEYS = ("prompt_ids", "response_ids", "loss_mask", "response_logprobs")
MAX_TRACES = 65_536
MAX_ARRAY_LENGTH = 1 << 28
MAX_HEADER_BYTES = 1 << 20
_ABSENT = -1
_ROW = struct.Struct("<4i")


def _malformed(why: str) -> PolarClientError:
    return PolarClientError("protocol", f"malformed trace frame: {why}")


def _pad8(n: int) -> int:
    return (n + 7) & ~7


def is_trace_frame(data: Union[bytes, bytearray, memoryview]) -> bool:
    return len(data) >= 8 and struct.unpack_from("<I", data, 0)[0] == TRACE_FRAME_MAGIC


def decode_trace_frame(data: Union[bytes, bytearray, memoryview]) -> tuple[Any, memoryview]:
    """The frame's header (parsed JSON) and its blob (a view, not a copy)."""
    view = memoryview(data)
    if not is_trace_frame(view):
        raise _malformed("it does not start with the trace-frame magic")
    (header_bytes,) = struct.unpack_from("<I", view, 4)
    if header_bytes > MAX_HEADER_BYTES:
        raise _malformed(f"a header of {header_bytes} bytes (at most {MAX_HEADER_BYTES})")
    blob_at = _pad8(8 + header_bytes)
    if blob_at > len(view):
        raise _malformed("shorter than its header")
    try:
        header = json.loads(bytes(view[8 : 8 + header_bytes]).decode("utf-8"))
    except ValueError:
        raise _malformed("its header is not UTF-8 JSON") from None
    return header, view[blob_at:]


def _typed(code: str, raw: memoryview) -> array:
    out = array(code)
    out.frombytes(raw)
    if sys.byteorder == "big":  # the frame is little-endian
        out.byteswap()
    return out


def unpack_traces(rest: list[Any], blob: memoryview) -> list[dict[str, Any]]:
    """`rest[i]` with its arrays from the blob; a NaN logprob (null when packed) is None."""
    if len(blob) < 8:
        raise _malformed("the blob is shorter than its header")
    count, reserved = struct.unpack_from("<II", blob, 0)
    if reserved != 0:
        raise _malformed("the blob's reserved bytes are not zero")
    if count > MAX_TRACES:
        raise _malformed(f"{count} traces (at most {MAX_TRACES})")
    if count != len(rest):
        raise _malformed(f"{count} traces in the blob, {len(rest)} in the header")
    if len(blob) < 8 + count * _ROW.size:
        raise _malformed("the blob is shorter than its length table")
    lengths: list[dict[str, Any]] = []
    f64 = i32 = u8 = 0
    for t in range(count):
        row = _ROW.unpack_from(blob, 8 + t * _ROW.size)
        for key, n in zip(TRACE_ARRAY_KEYS, row):
            if n != _ABSENT and not 0 <= n <= MAX_ARRAY_LENGTH:
                raise _malformed(f"trace {t} {key} length {n}")
        entry = {k: (None if n == _ABSENT else n) for k, n in zip(TRACE_ARRAY_KEYS, row)}
        f64 += entry["response_logprobs"] or 0
        i32 += (entry["prompt_ids"] or 0) + (entry["response_ids"] or 0)
        u8 += entry["loss_mask"] or 0
        lengths.append(entry)
    f64_at = _pad8(8 + count * _ROW.size)
    i32_at = f64_at + f64 * 8
    u8_at = i32_at + i32 * 4
    if u8_at + u8 != len(blob):
        raise _malformed(f"a blob of {len(blob)} bytes where its lengths say {u8_at + u8}")
    floats = _typed("d", blob[f64_at:i32_at])
    ints = _typed("i", blob[i32_at:u8_at])
    masks = bytes(blob[u8_at:])
    if masks and max(masks) > 1:
        raise _malformed("a loss_mask holds a value other than 0 or 1")
    out: list[dict[str, Any]] = []
    f = i = u = 0
    for base, entry in zip(rest, lengths):
        if not isinstance(base, dict):
            raise _malformed("a header trace is not an object")
        trace = dict(base)
        for key in TRACE_ARRAY_KEYS:
            if key in trace:
                raise _malformed(f"a header trace carries {key}")
        if entry["prompt_ids"] is not None:
            trace["prompt_ids"] = ints[i : i + entry["prompt_ids"]].tolist()
            i += entry["prompt_ids"]
        if entry["response_ids"] is not None:
            trace["response_ids"] = ints[i : i + entry["response_ids"]].tolist()
            i += entry["response_ids"]
        if entry["loss_mask"] is not None:
            trace["loss_mask"] = list(masks[u : u + entry["loss_mask"]])
            u += entry["loss_mask"]
        if entry["response_logprobs"] is not None:
            trace["response_logprobs"] = [None if math.isnan(v) else v for v in floats[f : f + entry["response_logprobs"]]]
            f += entry["response_logprobs"]
        out.append(trace)
    return out


def result_frame_object(data: Union[bytes, bytearray, memoryview]) -> dict[str, Any]:
    """A binary result frame as the JSON object a text frame would have been."""
    header, blob = decode_trace_frame(data)
    if not isinstance(header, dict) or header.get("type") != "result" or not isinstance(header.get("result"), dict):
        raise _malformed("a trace frame carries a result")
    result = dict(header["result"])
    traces = result.get("traces")
    if not isinstance(traces, list):
        raise _malformed("result.traces is not an array")
    result["traces"] = unpack_traces(traces, blob)
    return {**header, "result": result}
