"""``mcp-assay proxy`` inside the test process: mitmproxy on a thread of its own, the addon judging in process.

The injection scenarios need one proxy session per client (each case fires once per session), so
a subprocess per scenario would spend most of the test time starting Python and mitmproxy. This
runs the same :class:`~mitmproxy.tools.dump.DumpMaster`, the same addons in the same order as
``mcp-assay proxy`` (the injector, the server probe, the observer), on a free port of
127.0.0.1, with judging on a thread of this process; leaving the block stops mitmproxy the way
Ctrl-C does and the report is written. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_assay.addon.assay import Assay
from mcp_assay.spec import SpecSet
from tests.peers.process import free_port, wait_for_port

START_TIMEOUT = 10.0
STOP_TIMEOUT = 20.0


@dataclass
class InprocProxy:
    """A running in-process proxy: where clients connect, and (after the block) its report."""

    port: int
    path: str
    report_path: Path
    record: Path
    assay: Assay
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"


@contextmanager
def inproc_proxy(
    upstream_origin: str,
    folder: Path,
    spec: SpecSet,
    *,
    path: str = "/mcp",
    options: dict[str, Any] | None = None,
    name: str = "proxy",
) -> Iterator[InprocProxy]:
    """Reverse-proxy ``upstream_origin`` for the block, with the addon options given (``mcp_assay_inject`` ...)."""
    from mitmproxy.options import Options
    from mitmproxy.tools.dump import DumpMaster

    port = free_port()
    report_path, record = folder / f"{name}.json", folder / f"{name}.jsonl"
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        master: Any = DumpMaster(
            Options(mode=[f"reverse:{upstream_origin}"], listen_host="127.0.0.1", listen_port=port),
            with_termlog=False,
            with_dumper=False,
        )
        assay = Assay(in_process=True, spec=spec, reports=[f"json:{report_path}"], description=name)
        master.addons.add(assay.injector, assay.server_probe, assay)
        master.options.update(
            mcp_assay_record=str(record), mcp_assay_live="off", mcp_assay_fail_on="never", **(options or {})
        )
        holder.update(master=master, assay=assay, loop=asyncio.get_running_loop())
        ready.set()
        await master.run()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name=f"inproc-{name}", daemon=True)
    thread.start()
    if not ready.wait(START_TIMEOUT):
        raise RuntimeError("the in-process proxy did not start")
    wait_for_port(port, timeout=START_TIMEOUT)
    proxy = InprocProxy(port, path, report_path, record, holder["assay"])
    try:
        yield proxy
    finally:
        master = holder["master"]

        async def stop() -> None:
            # a stopped mitmproxy leaves its listening socket open (a process exit closes it): close it first
            await master.addons.get("proxyserver").servers.update([])
            master.shutdown()

        asyncio.run_coroutine_threadsafe(stop(), holder["loop"]).result(STOP_TIMEOUT)
        thread.join(STOP_TIMEOUT)
        holder.clear()
        gc.collect()  # what else its shutdown leaves to the collector goes now, under the caller's filters
        if report_path.is_file():
            proxy.report = json.loads(report_path.read_text(encoding="utf-8"))


def results(report: dict[str, Any], *requirements: str) -> list[dict[str, Any]]:
    """The report's results citing any of ``requirements`` (all when none is named), applicable ones only."""
    wanted = set(requirements)
    return [
        item
        for item in report.get("results", [])
        if item["outcome"] != "not_applicable" and (not wanted or wanted & set(item["requirements"]))
    ]


def outcome(report: dict[str, Any], check: str) -> str:
    """The outcome of one check in a report."""
    (item,) = [item for item in report["results"] if item["check"] == check]
    return str(item["outcome"])


def injected_exchanges(recording: Path) -> dict[str, str]:
    """The exchanges a recording marks as answered by mcp-assay: id -> ``http`` (a request and the answer
    mcp-assay made or reshaped), or, for a stdio line, whose line it is (``client`` or ``server``)."""
    marked: dict[str, str] = {}
    for line in recording.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        probe = record.get("probe")
        if isinstance(probe, dict) and probe.get("injected"):
            marked[str(record.get("x"))] = str(record.get("from", "http"))
    return marked


def injected_in(recording: Path) -> set[tuple[str, str]]:
    """The injection cases that met their point in a recording: (case name, era as recorded) of each injected
    exchange (a resumption after a cut carries a name of its own)."""
    met: set[tuple[str, str]] = set()
    for line in recording.read_text(encoding="utf-8").splitlines():
        probe = json.loads(line).get("probe")
        if isinstance(probe, dict) and probe.get("injected"):
            met.add((str(probe.get("name")), str(probe.get("era"))))
    return met


__all__: Sequence[str] = ("InprocProxy", "injected_exchanges", "injected_in", "inproc_proxy", "outcome", "results")
