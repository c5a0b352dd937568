"""Collective calls' exchanges: the threads of one process
(:class:`~oracleboost.rows.exchange.ThreadExchange`) and the members' own sockets
(:class:`~oracleboost.distributed.sockets.SocketMesh`, here between threads: the Dask
workers' use of it is ``test_cluster_exchange``)."""

from __future__ import annotations

import socket
import threading

import numpy as np
import pytest

from oracleboost.distributed.sockets import SocketMesh, decode, encode
from oracleboost.rows.exchange import MemberLostError, run_members_in_threads


def _steps(exchange, steps: int) -> list:
    """Each step's exchange of a payload that names the member and the step (arrays
    on odd steps, large enough to take several socket reads)."""
    seen = []
    for step in range(steps):
        if step % 2:
            payload = [(exchange.member, np.full((20, 64, 3), exchange.member + step / 8))]
        else:
            payload = exchange.member * 100 + step
        seen.append(exchange.allgather(payload))
    return seen


def _expected(members: int, step: int) -> list:
    if step % 2:
        return [[(m, np.full((20, 64, 3), m + step / 8))] for m in range(members)]
    return [m * 100 + step for m in range(members)]


def _same(got, expected) -> None:
    if isinstance(expected, list | tuple):
        assert type(got) is type(expected) and len(got) == len(expected)
        for a, b in zip(got, expected, strict=True):
            _same(a, b)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(got, expected)
    else:
        assert got == expected


@pytest.mark.parametrize("members", [1, 2, 3])
def test_threads_exchange_every_members_payload_in_member_order(members):
    results = run_members_in_threads(_steps, [(7,)] * members)
    for seen in results:
        for step, payloads in enumerate(seen):
            _same(payloads, _expected(members, step))


def test_a_member_that_raises_stops_the_others_and_its_error_is_raised():
    def member(exchange):
        exchange.allgather(exchange.member)
        if exchange.member == 1:
            raise ValueError("member 1 failed")
        exchange.allgather("the next step")  # (member 1 never comes: this raises)

    with pytest.raises(ValueError, match="member 1 failed"):
        run_members_in_threads(member, [(), (), ()])


def _mesh_members(members: int, steps: int, hello=None) -> list:
    """``_steps`` over sockets, each member a thread; ``hello(addresses)`` is called
    with the members' addresses before they connect (a stranger's visit)."""
    meshes = [SocketMesh(m, members, "127.0.0.1", 30.0) for m in range(members)]
    addresses = [m.address for m in meshes]
    if hello is not None:
        hello(addresses)
    results: list = [None] * members
    errors: list = []

    class _Exchange:
        def __init__(self, m):
            self.member, self.members, self.mesh = m, members, meshes[m]

        def allgather(self, payload):
            # (the mesh's views of its buffers last until its next call: copied here)
            return decode(memoryview(b"".join(encode(
                self.mesh.allgather(payload, lambda: None, 1.0)))))

    def run(m):
        try:
            meshes[m].connect(addresses)
            results[m] = _steps(_Exchange(m), steps)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            meshes[m].close()

    threads = [threading.Thread(target=run, args=(m,)) for m in range(members)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    return results


@pytest.mark.parametrize("members", [2, 3])
def test_sockets_exchange_every_members_payload_in_member_order(members):
    for seen in _mesh_members(members, 9):
        for step, payloads in enumerate(seen):
            _same(payloads, _expected(members, step))


def test_a_stranger_without_the_token_is_turned_away():
    """A connection to member 1 that says it is member 0 but does not present member
    1's token is closed unread (were it taken for member 0, the real member 0 would be
    turned away and the exchanges would fail); the members then connect as usual."""
    def stranger(addresses):
        host, port, _ = addresses[1]
        s = socket.create_connection((host, port))
        s.sendall(b"x" * 16 + (0).to_bytes(8, "little"))
        s.close()

    for seen in _mesh_members(2, 3, hello=stranger):
        for step, payloads in enumerate(seen):
            _same(payloads, _expected(2, step))


def test_a_closed_peer_is_a_lost_member():
    meshes = [SocketMesh(m, 2, "127.0.0.1", 30.0) for m in range(2)]
    addresses = [m.address for m in meshes]
    t = threading.Thread(target=meshes[1].connect, args=(addresses,))
    t.start()
    meshes[0].connect(addresses)
    t.join()
    meshes[1].close()
    with pytest.raises(MemberLostError, match="member 1"):
        meshes[0].allgather(np.zeros(10), lambda: None, 1.0)
    meshes[0].close()


def test_a_payload_is_data_never_code():
    payload = [None, 3, -2**62, 2.5, "name", (np.arange(6, dtype=np.int64).reshape(2, 3),),
               [np.array([True, False]), np.zeros((0, 4), dtype=np.uint8)], True]
    back = decode(memoryview(b"".join(encode(payload))))
    _same(back, [None, 3, -2**62, 2.5, "name", (np.arange(6).reshape(2, 3),),
                 [np.array([True, False]), np.zeros((0, 4), dtype=np.uint8)], 1])

    class Anything:
        pass

    for bad in (Anything(), {"a": 1}, np.array(["text"]), np.array([object()])):
        with pytest.raises(TypeError, match="exchange"):
            encode(bad)
    with pytest.raises(ValueError, match="unknown tag"):
        decode(memoryview(b"P" + b"\x80\x04"))  # (a pickle's opening: not a tag)
    with pytest.raises(ValueError, match="bytes after"):
        decode(memoryview(b"".join(encode(1)) + b"N"))
