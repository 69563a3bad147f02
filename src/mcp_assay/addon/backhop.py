"""A gateway's back hop, listened to while ``mcp-assay run`` tests the gateway (``run -u GATEWAY --gateway-back``).

The suite talks to the gateway as to any server (its front hop). The gateway is told that its upstream is
this listener's port; the listener is mitmproxy in reverse mode, in this process on a thread of its own,
forwarding to the real server and recording every exchange as the back hop
(:class:`~mcp_assay.wire.model.Hop`), event streams teed as they pass exactly as the proxy does (it runs the same
addon, :class:`~mcp_assay.addon.assay.Assay`, whose records are assembled here instead of judged). When the
suite is done, :meth:`BackHopListener.exchanges` hands what reached the upstream to the run, which judges
it with its own traffic (:mod:`mcp_assay.suite.judging`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from mcp_assay.addon.assay import Assay
from mcp_assay.recording.records import Assembler
from mcp_assay.spec import SpecSet
from mcp_assay.vocabulary.errors import AssayError
from mcp_assay.wire.model import Exchange, HttpExchange

__all__ = ["BackHopListener"]

START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


class _Recorder(Assay):
    """The proxy's addon, its records assembled into exchanges for the run instead of judged by a worker."""

    def __init__(self, spec: SpecSet, listener: BackHopListener) -> None:
        super().__init__(in_process=True, spec=spec, description="the gateway's back hop")
        self._assembler = Assembler(prefix="back:")
        self._listener = listener

    def running(self) -> None:
        self._listener.ready.set()

    def _feed(self, record: Mapping[str, Any]) -> None:
        for exchange in self._assembler.feed(record):
            self._listener.take(exchange)

    def done(self) -> None:
        for exchange in self._assembler.close():
            self._listener.take(exchange)


class BackHopListener:
    """mitmproxy listening at ``host:port`` in reverse mode to ``origin``, on a thread, recording the back hop."""

    def __init__(self, port: int, origin: str, spec: SpecSet, *, host: str = "127.0.0.1") -> None:
        self.port = port
        self.origin = origin
        self.host = host
        self.spec = spec
        self.ready = threading.Event()
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._master: Any = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="mcp-assay-back-hop", daemon=True)

    def take(self, exchange: Exchange) -> None:
        if isinstance(exchange, HttpExchange):
            with self._lock:
                self._exchanges.append(exchange)

    def exchanges(self) -> list[Exchange]:
        """What reached the upstream so far, in the order it finished."""
        with self._lock:
            return list(self._exchanges)

    def __enter__(self) -> BackHopListener:
        self._thread.start()
        if not self.ready.wait(START_TIMEOUT) or self._failed is not None:
            self.close()
            why = f": {self._failed}" if self._failed is not None else ""
            raise AssayError(f"--gateway-back: could not listen on {self.host}:{self.port}{why}")
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        loop, master = self._loop, self._master
        if loop is not None and master is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(master.shutdown)
            except RuntimeError:
                pass
        self._thread.join(STOP_TIMEOUT)

    def _serve(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # noqa: BLE001 - said by __enter__
            self._failed = exc
            self.ready.set()

    async def _run(self) -> None:
        from mitmproxy.options import Options
        from mitmproxy.tools.dump import DumpMaster

        self._loop = asyncio.get_running_loop()
        master: Any = DumpMaster(
            Options(mode=[f"reverse:{self.origin}"], listen_host=self.host, listen_port=self.port),
            with_termlog=False,
            with_dumper=False,
        )
        self._master = master
        recorder = _Recorder(self.spec, self)
        master.addons.add(recorder)
        master.options.update(mcp_assay_hop="back", mcp_assay_live="off")
        try:
            await master.run()
        except SystemExit as exc:  # mitmproxy gives up at startup (the port is taken)
            raise AssayError(f"mitmproxy stopped ({exc.code})") from None
