"""The members of a collective call connected by TCP sockets of their own, as
LightGBM's workers are: an exchange costs a write and a read on each socket, where
Dask's messages between workers cost about a millisecond each (through each worker's
event loop).

The members meet through Dask first (each says where it listens, with a token that a
member connecting to it must present: a socket that does not is closed unread), then
member ``i`` connects to every member after it.  A payload is data, never code: numbers,
NumPy arrays of numbers and lists or tuples of them, written as a tag, a shape and the
bytes (:func:`encode`); nothing that a peer sends is unpickled or run.
"""

from __future__ import annotations

import secrets
import selectors
import socket
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from oracleboost.rows.exchange import MemberLostError

__all__ = ["SocketMesh", "decode", "encode"]

_HEADER = struct.Struct("<Q")  # a message's length in bytes
_TOKEN_BYTES = 16
_BUFFER_BYTES = 4 << 20

# tags of the payload's items
_NONE, _INT, _FLOAT, _ARRAY, _LIST, _TUPLE, _STR = b"N", b"I", b"F", b"A", b"L", b"T", b"S"
#: The array dtypes a payload may hold
_DTYPES = {np.dtype(t).str: np.dtype(t) for t in
           ("float64", "float32", "int64", "int32", "uint8", "bool")}


def encode(obj: Any, out: list | None = None) -> list:
    """``obj`` as a list of byte strings (and array buffers): None, int, float, str,
    arrays of :data:`_DTYPES`, lists and tuples of them."""
    out = [] if out is None else out
    if obj is None:
        out.append(_NONE)
    elif isinstance(obj, (bool, np.bool_)):
        out.append(_INT + struct.pack("<q", int(obj)))
    elif isinstance(obj, (int, np.integer)):
        out.append(_INT + struct.pack("<q", int(obj)))
    elif isinstance(obj, (float, np.floating)):
        out.append(_FLOAT + struct.pack("<d", float(obj)))
    elif isinstance(obj, str):
        data = obj.encode()
        out.append(_STR + struct.pack("<Q", len(data)) + data)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.str not in _DTYPES:
            raise TypeError(f"an exchanged array must be of {sorted(_DTYPES)}; got "
                            f"{obj.dtype}")
        a = np.ascontiguousarray(obj)
        kind = a.dtype.str.encode()
        out.append(_ARRAY + struct.pack("<B", len(kind)) + kind
                   + struct.pack("<B", a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape))
        out.append(memoryview(a.reshape(-1).view(np.uint8)))
    elif isinstance(obj, (list, tuple)):
        out.append((_LIST if isinstance(obj, list) else _TUPLE) + struct.pack("<Q", len(obj)))
        for item in obj:
            encode(item, out)
    else:
        raise TypeError(f"a collective call exchanges numbers, arrays and lists of them; "
                        f"got {type(obj).__name__}")
    return out


def decode(data: memoryview, copy: bool = True) -> Any:
    """The object :func:`encode` wrote into ``data``: its arrays copied out, or views of
    ``data`` (``copy=False``)."""
    obj, at = _decode(data, 0, copy)
    if at != len(data):
        raise ValueError("an exchanged message has bytes after its payload")
    return obj


def _decode(data: memoryview, at: int, copy: bool) -> tuple[Any, int]:
    tag = bytes(data[at:at + 1])
    at += 1
    if tag == _NONE:
        return None, at
    if tag == _INT:
        return struct.unpack_from("<q", data, at)[0], at + 8
    if tag == _FLOAT:
        return struct.unpack_from("<d", data, at)[0], at + 8
    if tag == _STR:
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        return bytes(data[at:at + size]).decode(), at + size
    if tag == _ARRAY:
        (k,) = struct.unpack_from("<B", data, at)
        dtype = _DTYPES[bytes(data[at + 1:at + 1 + k]).decode()]
        at += 1 + k
        (ndim,) = struct.unpack_from("<B", data, at)
        shape = struct.unpack_from(f"<{ndim}q", data, at + 1)
        at += 1 + 8 * ndim
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        a = np.frombuffer(data[at:at + size], dtype=dtype).reshape(shape)
        return (a.copy() if copy else a), at + size
    if tag in (_LIST, _TUPLE):
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        items = []
        for _ in range(size):
            item, at = _decode(data, at, copy)
            items.append(item)
        return (items if tag == _LIST else tuple(items)), at
    raise ValueError(f"an exchanged message holds an unknown tag {tag!r}")


class SocketMesh:
    """A member's sockets to every other member of a collective call.

    Made in two steps: :meth:`listen` (where this member listens, and its token, to be
    told the others), then :meth:`connect` with every member's ``(host, port, token)``.
    ``check()`` is called whenever a wait lasts ``check_every`` seconds (it raises to
    stop the wait)."""

    def __init__(self, member: int, members: int, host: str, timeout: float) -> None:
        self.member, self.members = member, members
        self.timeout = timeout
        self._token = secrets.token_bytes(_TOKEN_BYTES)
        self._listener = socket.create_server((host, 0))
        self.address = (host, self._listener.getsockname()[1], self._token.hex())
        self._peers: dict[int, socket.socket] = {}

    def connect(self, addresses: list) -> None:
        """Connect to every member after this one, and accept every one before it."""
        try:
            for m in range(self.member + 1, self.members):
                host, port, token = addresses[m]
                s = socket.create_connection((host, int(port)), timeout=self.timeout)
                s.sendall(bytes.fromhex(token) + struct.pack("<q", self.member))
                self._peers[m] = s
            self._listener.settimeout(self.timeout)
            while len(self._peers) < self.members - 1:
                s, _ = self._listener.accept()
                s.settimeout(self.timeout)
                hello = _read_exactly(s, _TOKEN_BYTES + 8)
                m = struct.unpack("<q", hello[_TOKEN_BYTES:])[0]
                if (not secrets.compare_digest(hello[:_TOKEN_BYTES], self._token)
                        or not 0 <= m < self.member or m in self._peers):
                    s.close()  # (not a member of this call)
                    continue
                self._peers[m] = s
        except OSError as exc:
            self.close()
            raise MemberLostError(f"a member of a collective call could not reach the "
                                  f"others: {exc!r}") from exc
        finally:
            self._listener.close()
        for s in self._peers.values():
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # (a histogram is hundreds of kilobytes: sent in a few calls, not hundreds)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _BUFFER_BYTES)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _BUFFER_BYTES)
            s.setblocking(False)
        self._inbox = {m: _Inbox() for m in self._peers}
        self._out = bytearray()

    def allgather(self, payload: Any, check: Callable[[], None],
                  check_every: float) -> list:
        """Every member's payload, this one's included, in member order; the arrays of
        the others' are views of this mesh's buffers, valid until the next call.  (A
        peer that finished this step may send the next one's message before this
        member has read all of this one's: what is read past a message stays in the
        peer's inbox.)"""
        out = {m: self._outgoing(payload) for m in self._peers}
        result: list = [None] * self.members
        result[self.member] = payload
        for m in self._peers:  # (last step's messages are read: their bytes can go)
            self._inbox[m].drop_read()
        waiting = {m for m in self._peers if not self._take(m, result)}
        with selectors.DefaultSelector() as sel:
            for m, s in self._peers.items():
                sel.register(s, selectors.EVENT_WRITE | (
                    selectors.EVENT_READ if m in waiting else 0), m)
            while waiting or any(len(v) for v in out.values()):
                events = sel.select(check_every)
                if not events:
                    check()
                    continue
                for key, mask in events:
                    m, s = key.data, key.fileobj
                    try:
                        if mask & selectors.EVENT_WRITE and len(out[m]):
                            out[m] = out[m][s.send(out[m]):]
                        if mask & selectors.EVENT_READ and m in waiting:
                            if not self._inbox[m].receive(s):
                                raise ConnectionResetError("the member's socket closed")
                            if self._take(m, result):
                                waiting.discard(m)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError as exc:
                        raise MemberLostError(f"member {m} of a collective call was "
                                              f"lost: {exc!r}") from exc
                    wanted = (selectors.EVENT_READ if m in waiting else 0) | (
                        selectors.EVENT_WRITE if len(out[m]) else 0)
                    if not wanted:
                        sel.unregister(s)
                    elif wanted != key.events:
                        sel.modify(s, wanted, m)
        return result

    def _outgoing(self, payload: Any) -> memoryview:
        """The message of ``payload``, written into this mesh's send buffer (kept from
        call to call: a new buffer of hundreds of kilobytes a step would fault its
        pages in each time)."""
        parts = encode(payload)
        size = _HEADER.size + sum(len(p) for p in parts)
        if len(self._out) < size:
            self._out = bytearray(size)
        view = memoryview(self._out)
        _HEADER.pack_into(view, 0, size - _HEADER.size)
        at = _HEADER.size
        for part in parts:
            view[at:at + len(part)] = part
            at += len(part)
        return view[:size]

    def _take(self, m: int, result: list) -> bool:
        """Member ``m``'s next message into ``result``, if its inbox holds all of it."""
        message = self._inbox[m].message()
        if message is None:
            return False
        result[m] = decode(message, copy=False)
        return True

    def close(self) -> None:
        for s in self._peers.values():
            s.close()
        self._peers = {}
        self._listener.close()


class _Inbox:
    """The bytes read from a member's socket, in a buffer kept from step to step."""

    def __init__(self) -> None:
        self.buf = bytearray(1 << 16)
        self.start = 0  # where the first message not yet taken starts
        self.end = 0  # where the bytes read end

    def drop_read(self) -> None:
        """Let the taken messages' bytes go (a new step: their views are not used)."""
        left = self.end - self.start
        if self.start and left:
            self.buf[:left] = self.buf[self.start:self.end]
        self.start, self.end = 0, left

    def receive(self, s: socket.socket) -> bool:
        """Read what the socket has (False: it closed)."""
        if len(self.buf) - self.end < (1 << 16):
            # a larger buffer, new: this step's messages taken keep their views of the
            # old one
            new = bytearray(2 * len(self.buf))
            new[:self.end - self.start] = self.buf[self.start:self.end]
            self.buf, self.start, self.end = new, 0, self.end - self.start
        with memoryview(self.buf) as view:
            k = s.recv_into(view[self.end:])
        self.end += k
        return k > 0

    def message(self) -> memoryview | None:
        """The next whole message's body (a view), or None."""
        if self.end - self.start < _HEADER.size:
            return None
        stop = self.start + _HEADER.size + _HEADER.unpack_from(self.buf, self.start)[0]
        if self.end < stop:
            return None
        body = memoryview(self.buf)[self.start + _HEADER.size:stop]
        self.start = stop
        return body


def _read_exactly(s: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = s.recv(size - len(data))
        if not chunk:
            raise ConnectionResetError("a socket closed during a collective call's hello")
        data += chunk
    return data
