"""Work every test process of a run would repeat, done once per run and shared through files.

A module-scoped fixture runs once per pytest-xdist worker that runs a test of its module, and work stealing
spreads a module's tests over several workers: a fixture that drives peers for a minute then costs a minute on
each. What such a fixture produces is files (reports, recordings), so :func:`built_once` lets the first worker
that needs a piece build it into a folder of the run's temp directory, under a lock, and every later worker read
the same files. The pieces are small (one scenario each), so the workers build different pieces at the same time.
Every wait is bounded.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

LOCK_TIMEOUT = 240.0
"""How long a worker waits for another to finish building a piece (a piece takes seconds)."""

DONE = ".built"


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this test run shares: the run's temp directory (an xdist worker's own temp
    directory is a child of it), alone it is the process's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory: pytest.TempPathFactory, key: str, build: Callable[[Path], None]) -> Path:
    """The folder of the piece ``key``: built by ``build(folder)`` in the first process that asks for it, the same
    folder for every later one. A build that raises leaves no piece behind (the next one to ask builds it again,
    and fails the same way in its own test)."""
    root = run_folder(tmp_path_factory) / "built-once"
    root.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"another test process held {key!r} for over {LOCK_TIMEOUT:.0f} s") from None
                time.sleep(0.05)
        try:
            if not (folder / DONE).exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                (folder / DONE).touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder
