"""How much the proxy slows MCP traffic down (run by hand; not a timed test).

    .venv/bin/python tests/bench/bench_proxy.py [REQUESTS]

Starts the Python SDK fixture server and measures sequential 2026-07-28 ``tools/list`` round trips
on one keep-alive connection: directly, through a plain ``mitmdump`` reverse proxy, through
``mitmdump -s "$(mcp-assay addon-path)"`` (recording on), through ``mcp-assay proxy``, and through
``mcp-assay proxy --inject all`` (its faults fire during the warm-up; what is measured is the
injector's cost on every later request, with the hold at 1 ms). Each path
is reported as mean / p50 / p95 and as a ratio against the direct baseline of the same run, so
the numbers compare across machines. Every loop is bounded (REQUESTS, and 60 s).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.peers.assay import MITMDUMP, assay_proxy, mitmdump  # noqa: E402
from tests.peers.process import free_port, sdk_http_server, stop, wait_for_port  # noqa: E402

SPEC_DIR = Path(os.environ.get("MCP_ASSAY_SPEC_DIR") or Path(__file__).resolve().parents[3] / "shared" / "spec")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/list",
}
WARM_UP = 20
LIMIT_S = 60.0


def measure(url: str, count: int) -> list[float]:
    latencies: list[float] = []
    with httpx2.Client(timeout=10) as client:
        for n in range(WARM_UP):
            client.post(url, headers=HEADERS, json={"jsonrpc": "2.0", "id": n, "method": "tools/list",
                                                    "params": {"_meta": META}})  # fmt: skip
        started = time.perf_counter()
        for n in range(count):
            body = json.dumps({"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/list", "params": {"_meta": META}})
            t0 = time.perf_counter()
            response = client.post(url, headers=HEADERS, content=body)
            response.read()
            latencies.append((time.perf_counter() - t0) * 1000)
            if response.status_code != 200:
                raise SystemExit(f"{url}: HTTP {response.status_code}")
            if time.perf_counter() - started > LIMIT_S:
                break
    return latencies


@contextmanager
def plain_mitmdump(origin: str) -> Iterator[str]:
    """mitmdump without the addon, as the baseline for what mitmproxy itself costs: the command
    tests/peers/assay.py's ``mitmdump`` runs, options included, but ``-s``."""
    port = free_port()
    command = [MITMDUMP, "--mode", f"reverse:{origin}", "--listen-host", "127.0.0.1", "-p", str(port)]
    command += ["--set", "flow_detail=0"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    folder = Path(tempfile.mkdtemp(prefix="mcp-assay-bench-"))
    results: dict[str, list[float]] = {}
    with sdk_http_server() as server:
        origin = server.url.removesuffix("/mcp")
        results["direct"] = measure(server.url, count)
        with plain_mitmdump(origin) as url:
            results["mitmdump"] = measure(url, count)
        with mitmdump(
            origin, f"mcp_assay_record={folder / 'addon.jsonl'}", f"mcp_assay_report=json:{folder / 'addon.json'}",
            f"mcp_assay_spec_dir={SPEC_DIR}", "mcp_assay_live=off",
        ) as proxy:  # fmt: skip
            results["mitmdump + addon"] = measure(proxy.url, count)
        with assay_proxy(
            server.url, "--record", str(folder / "proxy.jsonl"), "--report", f"json:{folder / 'proxy.json'}",
            "--spec-dir", str(SPEC_DIR), "--live", "off",
        ) as proxy:  # fmt: skip
            results["mcp-assay proxy"] = measure(proxy.url, count)
        with assay_proxy(
            server.url, "--record", str(folder / "inject.jsonl"), "--report", f"json:{folder / 'inject.json'}",
            "--spec-dir", str(SPEC_DIR), "--live", "off", "--inject", "all", "--inject-hold-ms", "1",
        ) as proxy:  # fmt: skip
            results["proxy --inject all"] = measure(proxy.url, count)
    base = statistics.mean(results["direct"])
    print(f"tools/list (2026-07-28, JSON answer), {count} sequential requests per path, one keep-alive connection")
    print(f"{'path':<22}{'mean ms':>9}{'p50':>8}{'p95':>8}{'x direct':>10}")
    for name, values in results.items():
        values.sort()
        mean = statistics.mean(values)
        p50 = values[len(values) // 2]
        p95 = values[int(len(values) * 0.95) - 1]
        print(f"{name:<22}{mean:>9.2f}{p50:>8.2f}{p95:>8.2f}{mean / base:>10.2f}")
    print(f"(recordings and reports in {folder})")


if __name__ == "__main__":
    main()
