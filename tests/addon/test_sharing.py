"""How the judging worker shares the machine: it yields to the traffic with a bounded delay.

Tool-defined: while traffic flows the worker's judging thread runs at a yielding policy (``SCHED_IDLE``
where it may be left again, else ``SCHED_BATCH``), while the thread that reads and records keeps the
ordinary share; the judging thread takes its ordinary share for good once the traffic ends, so the report
after Ctrl-C is as quick as ever (how far behind it may fall is the backlog's bound, test_backlog.py).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcp_assay.addon.sharing import Sharing
from mcp_assay.addon.worker import _ENDING, RemoteSession
from tests.addon.test_worker import _exchange, _settings

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="no scheduling policies here")


@contextmanager
def judging_thread() -> Iterator[tuple[Sharing, int]]:
    """A thread standing in for the worker's judging thread, with its :class:`Sharing`."""
    made: list[tuple[Sharing, int]] = []
    ready, done = threading.Event(), threading.Event()

    def run() -> None:
        made.append((Sharing(), threading.get_native_id()))
        ready.set()
        done.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(5)
    try:
        yield made[0]
    finally:
        made[0][0].ordinary(for_good=True)
        done.set()
        thread.join(5)


def test_the_judging_thread_yields_and_stops_yielding_when_traffic_ends() -> None:
    with judging_thread() as (sharing, thread):
        assert sharing.yielding_policy in (os.SCHED_IDLE, os.SCHED_BATCH)
        sharing.yield_to_traffic()
        assert os.sched_getscheduler(thread) == sharing.yielding_policy
        sharing.ordinary(for_good=True)
        assert os.sched_getscheduler(thread) == os.SCHED_OTHER
        sharing.yield_to_traffic()
        assert os.sched_getscheduler(thread) == os.SCHED_OTHER  # the traffic ended: never yields again


def _policies(pid: int) -> set[int]:
    """The scheduling policies of a process's threads."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.add(os.sched_getscheduler(int(task.name)))
        except OSError:
            continue
    return found


def _wait_for(pid: int, wanted: Callable[[set[int]], bool]) -> bool:
    """Whether the threads' policies come to be ``wanted`` (the judging thread starts once the schemas are
    loaded: seconds on a busy machine)."""
    deadline = time.monotonic() + 30
    while not wanted(_policies(pid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return wanted(_policies(pid))


def test_the_worker_yields_while_traffic_flows_and_takes_its_share_when_told_it_ended(
    tmp_path: Path, spec_path: Path
) -> None:
    session = RemoteSession(_settings(tmp_path, spec_path))
    _exchange(session, "x1", {"resultType": "complete", "tools": []})
    pid = session.process.pid
    assert _wait_for(pid, lambda policies: bool(policies & {os.SCHED_IDLE, os.SCHED_BATCH}))  # the judging thread
    assert os.sched_getscheduler(pid) == os.SCHED_OTHER  # the thread that reads and records never yields
    session._tell(_ENDING)
    assert _wait_for(pid, lambda policies: policies == {os.SCHED_OTHER})
    finished = session.close()
    assert finished.error == "" and finished.written
