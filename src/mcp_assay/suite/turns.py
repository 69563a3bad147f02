"""Taking turns at the server: the revisions a run tests proceed side by side, except where they must not.

Each revision under test has its own connections (over stdio, its own server processes) and its
own log segment, so their probe families can run at the same time: a run over both revisions
takes about as long as its slower revision, not as long as both. A few families need the server
to themselves (:attr:`~mcp_assay.suite.context.ProbeFamily.exclusive`): a witness read that must see
only its own writes, a burst that looks for a rate limit, the stand-in authorization server that
must attribute every key fetch to the token that caused it. Such a family waits until every other
family in flight has finished, and nothing else starts until it has.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["Turns"]


class Turns:
    """A readers-writer gate over the server: shared turns run together, an exclusive turn runs alone."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0
        """Exclusive turns waiting: no new shared turn starts meanwhile, so they are never starved."""

    @asynccontextmanager
    async def take(self, *, exclusive: bool) -> AsyncIterator[None]:
        """Hold a turn for the body of the ``async with``."""
        if exclusive:
            async with self._exclusive_turn():
                yield
        else:
            async with self._shared_turn():
                yield

    @asynccontextmanager
    async def _shared_turn(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._exclusive and not self._waiting)
            self._shared += 1
        try:
            yield
        finally:
            async with self._changed:
                self._shared -= 1
                self._changed.notify_all()

    @asynccontextmanager
    async def _exclusive_turn(self) -> AsyncIterator[None]:
        async with self._changed:
            self._waiting += 1
            try:
                await self._changed.wait_for(lambda: not self._exclusive and not self._shared)
            finally:
                self._waiting -= 1
                self._changed.notify_all()  # a cancelled wait must not keep shared turns out
            self._exclusive = True
        try:
            yield
        finally:
            async with self._changed:
                self._exclusive = False
                self._changed.notify_all()
