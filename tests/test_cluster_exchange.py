"""Collective calls on a Dask cluster (:mod:`oracleboost.distributed.exchange`): the
members, pinned to the workers, exchange through sockets of their own; a member's error
stops the call and is raised, a lost worker's member is run again, and neither leaves a
worker's thread waiting.  One LocalCluster of 2 worker processes (with nannies, which
start a killed worker's process again) for the module."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

from oracleboost.distributed.cluster import DaskExecutor  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "1h"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _rounds(exchange, steps):
    """Each step's payloads as this member saw them (copied: an exchange's arrays are
    views of its buffers until the next step)."""
    seen = []
    for step in range(steps):
        payload = (exchange.member, step, np.full(5000, exchange.member + step / 4))
        seen.append([(m, s, a.copy()) for m, s, a in exchange.allgather(payload)])
    return seen


def _check_rounds(results, members, steps):
    assert len(results) == members
    for seen in results:
        assert len(seen) == steps
        for step, payloads in enumerate(seen):
            assert [(m, s) for m, s, _ in payloads] == [(m, step) for m in range(members)]
            for m, _, a in payloads:
                np.testing.assert_array_equal(a, np.full(5000, m + step / 4))


def _call(client, fn, args, key):
    executor = DaskExecutor(client)
    futures = executor.collective(fn, args, [[] for _ in args], key=key)
    return client.gather(futures)


def _within(seconds, fn, *args):
    """``fn(*args)``'s result, or a failure if it takes longer than ``seconds`` (a
    worker's thread left waiting would keep a later call from ever running)."""
    out: list = []
    errors: list = []

    def run():
        try:
            out.append(fn(*args))
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"the call did not finish within {seconds} s"
    if errors:
        raise errors[0]
    return out[0]


@pytest.mark.parametrize("members", [1, 2, 3])
def test_members_exchange_every_payload_in_member_order(client, members):
    """One, two and three members on two workers (three: two of them share a worker's
    process, and talk through its loopback)."""
    client.wait_for_workers(2, timeout=60)
    results = _within(120, _call, client, _rounds, [(6,)] * members, f"rounds-{members}")
    _check_rounds(results, members, 6)


def _fails_at_step_2(exchange):
    exchange.allgather(exchange.member)
    exchange.allgather(exchange.member)
    if exchange.member == 1:
        raise ValueError("member 1 found bad rows")
    exchange.allgather("never complete")


def test_a_members_error_is_raised_and_frees_the_others(client):
    client.wait_for_workers(2, timeout=60)
    with pytest.raises(ValueError, match="member 1 found bad rows"):
        _within(120, _call, client, _fails_at_step_2, [(), ()], "fails")
    # member 0's worker has one thread: a member still waiting there would hold it
    _check_rounds(_within(120, _call, client, _rounds, [(3,), (3,)], "after-fails"), 2, 3)


def _dies_once(exchange, marker, steps):
    """Member 1 kills its own worker's process at step 2, the first time."""
    seen = []
    for step in range(steps):
        if step == 2 and exchange.member == 1 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        payload = (exchange.member, step, np.full(5000, exchange.member + step / 4))
        seen.append([(m, s, a.copy()) for m, s, a in exchange.allgather(payload)])
    return seen


def test_a_member_whose_worker_dies_is_run_again(client, tmp_path):
    client.wait_for_workers(2, timeout=60)
    marker = str(tmp_path / "died")
    results = _within(180, _call, client, _dies_once, [(marker, 5), (marker, 5)], "dies")
    assert os.path.exists(marker)  # (it died, and the call ran again)
    _check_rounds(results, 2, 5)
    client.wait_for_workers(2, timeout=60)


def test_workers_sharing_a_process_and_sockets_that_cannot_connect(monkeypatch):
    """A LocalCluster of threads talking by TCP (two workers in this process: each has
    a mailbox of its own), whose sockets fail to connect (a firewall between the
    workers, say): the members agree to exchange through Dask's messages, and the
    process does not try its sockets again.  (A LocalCluster of threads talks
    "inproc" by default: its exchanges are Dask's messages at once.)"""
    from oracleboost.distributed import exchange, sockets
    from oracleboost.rows.exchange import MemberLostError

    tries = []

    def refused(self, addresses):
        tries.append(self.member)
        raise MemberLostError("connection refused (a test's firewall)")

    monkeypatch.setattr(sockets.SocketMesh, "connect", refused)
    monkeypatch.setattr(exchange, "_NO_SOCKETS", [])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        _check_rounds(_within(120, _call, c, _rounds, [(4,), (4,)], "refused"), 2, 4)
        assert sorted(tries) == [0, 1] and exchange._NO_SOCKETS
        _check_rounds(_within(120, _call, c, _rounds, [(4,), (4,)], "no-sockets"), 2, 4)
        assert sorted(tries) == [0, 1]  # (not tried again)
