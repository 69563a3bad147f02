"""Both hops of a gateway watched inside the test process: ``mcp-assay proxy --gateway-back`` without a subprocess.

mitmproxy runs on a thread of its own with two reverse listeners (the gateway's front, and its back: the address
the gateway is told its upstream is) and the addon judging in process, as ``tests.peers.inproc_proxy`` does for
one hop; leaving the block stops it the way Ctrl-C does and the report is read. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_assay.addon.assay import Assay
from mcp_assay.spec import SpecSet
from tests.peers.process import free_port, wait_for_port

START_TIMEOUT = 10.0
STOP_TIMEOUT = 30.0


@dataclass
class BothHops:
    """The running watcher: the front URL clients use, the back URL the gateway must use, and (after) the report."""

    front_port: int
    back_port: int
    report_path: Path
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.front_port}/mcp"

    @property
    def back_url(self) -> str:
        return f"http://127.0.0.1:{self.back_port}/mcp"


@contextmanager
def both_hops(gateway_origin: str, upstream_origin: str, folder: Path, spec: SpecSet) -> Iterator[BothHops]:
    """Listen at the gateway's front (forwarding to ``gateway_origin``) and back (to ``upstream_origin``)."""
    from mitmproxy.options import Options
    from mitmproxy.tools.dump import DumpMaster

    front_port, back_port = free_port(), free_port()
    back_mode = f"reverse:{upstream_origin}@{back_port}"
    report_path = folder / "report.json"
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        master: Any = DumpMaster(
            Options(mode=[f"reverse:{gateway_origin}", back_mode], listen_host="127.0.0.1", listen_port=front_port),
            with_termlog=False,
            with_dumper=False,
        )
        assay = Assay(in_process=True, spec=spec, reports=[f"json:{report_path}"], description="both hops")
        master.addons.add(assay.injector, assay.server_probe, assay)
        master.options.update(mcp_assay_live="off", mcp_assay_fail_on="never", mcp_assay_gateway_back=back_mode)
        holder.update(master=master, loop=asyncio.get_running_loop())
        ready.set()
        await master.run()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name="inproc-both-hops", daemon=True)
    thread.start()
    if not ready.wait(START_TIMEOUT):
        raise RuntimeError("the in-process proxy did not start")
    wait_for_port(front_port, timeout=START_TIMEOUT)
    wait_for_port(back_port, timeout=START_TIMEOUT)
    running = BothHops(front_port, back_port, report_path)
    try:
        yield running
    finally:
        master = holder["master"]

        async def stop() -> None:
            await master.addons.get("proxyserver").servers.update([])
            master.shutdown()

        asyncio.run_coroutine_threadsafe(stop(), holder["loop"]).result(STOP_TIMEOUT)
        thread.join(STOP_TIMEOUT)
        holder.clear()
        gc.collect()
        if report_path.is_file():
            running.report = json.loads(report_path.read_text(encoding="utf-8"))
