"""The proxy at saturation: how many requests a second it forwards, and whether judging keeps up (run by hand).

    .venv/bin/python tests/bench/bench_saturation.py [--seconds 60] [--segment 2] [--connections 16] [--quick]

A fast MCP-like HTTP server (``fast_server.py``, tens of microseconds a request) sits behind three
paths running at once: plain ``mitmdump`` (reverse mode, no addon: the baseline), ``mitmdump -s`` with the
addon, and ``mcp-assay proxy``, both recording and writing a JSON report. The paths take turns of
``--segment`` seconds (2) until each had ``--seconds`` of load (``--quick``: 6), so a change in a shared
machine's load falls on all of them alike; in its turn a path gets ``--connections`` keep-alive
connections, each sending its next ``tools/list`` as soon as the last one was answered. At the end of each
turn the bench samples the requests answered, the resident memory of the proxy and its judging worker,
and the worker's own count of what it received, judged, holds and left unjudged (the worker writes it
when ``MCP_ASSAY_WORKER_STATUS`` names a file). After the load the proxies are stopped as Ctrl-C would,
and the bench prints how long each report took, what it says was left unjudged live, and whether
``mcp-assay validate`` of the recording judged every exchange the proxy forwarded.

Ratios are against plain mitmdump in the same run, so they compare across machines. Everything runs on
127.0.0.1; every loop is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_proxy import plain_mitmdump  # noqa: E402
from tests.peers.assay import RunningProxy, assay_proxy, mitmdump  # noqa: E402
from tests.peers.process import PYTHON, free_port, stop, wait_for_port  # noqa: E402

from mcp_assay.addon.worker import STATUS_VARIABLE  # noqa: E402

SPEC_DIR = Path(os.environ.get("MCP_ASSAY_SPEC_DIR", ROOT.parent / "shared" / "spec")).resolve()
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
WARM_UP_S = 1.0
REPORT_LIMIT_S = 600.0
"""The longest the bench waits for a proxy's report once the load stops."""


# -- the load --------------------------------------------------------------------------------------
def _request(path: str, port: int, ident: int) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": {"_meta": META}}, separators=(",", ":")
    ).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        "accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
        f"mcp-method: tools/list\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _connection(port: int, path: str, first: int, until: float, answered: list[int]) -> None:
    """Requests one after the other on a keep-alive connection until ``until``; a connection the proxy
    closes is opened again (counted in ``answered[1]``)."""
    ident = first
    while time.monotonic() < until:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.monotonic() < until:
                writer.write(_request(path, port, ident))
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                if not head.startswith(b"HTTP/1.1 200"):
                    raise SystemExit(f"127.0.0.1:{port}{path}: {head.splitlines()[0].decode(errors='replace')}")
                await reader.readexactly(length)
                answered[0] += 1
                ident += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            answered[1] += 1
        finally:
            writer.close()


def flood(port: int, path: str, requests: int, connections: int = 8) -> int:
    """Send ``requests`` requests over ``connections`` keep-alive connections at once, each as soon as the
    last was answered; how many were answered (bounded: 30 s a request at most)."""
    answered = [0, 0]

    async def one(first: int, count: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for ident in range(first, first + count):
                writer.write(_request(path, port, ident))
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
                length = next(
                    (int(line[15:]) for line in head.split(b"\r\n") if line[:15].lower() == b"content-length:"), 0
                )
                await reader.readexactly(length)
                answered[0] += 1
        finally:
            writer.close()

    async def run() -> None:
        share = requests // connections
        counts = [share + (1 if n < requests % connections else 0) for n in range(connections)]
        await asyncio.gather(*(one(1_000_000 * (n + 1), count) for n, count in enumerate(counts) if count))

    asyncio.run(run())
    return answered[0]


@dataclass
class Sample:
    second: float
    answered: int
    rss_mib: float
    worker: dict[str, Any] = field(default_factory=dict)
    cpu: tuple[float, float] = (0.0, 0.0)
    """CPU seconds so far of the proxy process and of its children (the judging worker)."""


async def _load(port: int, path: str, seconds: float, connections: int, sample: Any) -> list[Sample]:
    answered = [0, 0]
    until = time.monotonic() + seconds
    tasks = [
        asyncio.create_task(_connection(port, path, 1_000_000 * (n + 1), until, answered)) for n in range(connections)
    ]
    samples: list[Sample] = []
    started = time.monotonic()
    while not all(task.done() for task in tasks):
        await asyncio.sleep(1.0)
        samples.append(Sample(time.monotonic() - started, answered[0], *sample()))
    for task in tasks:
        task.result()  # a connection that failed fails the bench
    samples.append(Sample(time.monotonic() - started, answered[0], *sample()))
    return samples


# -- what is sampled -------------------------------------------------------------------------------
def rss_mib(pid: int) -> float:
    """Resident memory of a process and its descendants (the judging worker), in MiB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds (user and system) of a process, and of its descendants (the judging worker)."""
    tick = os.sysconf("SC_CLK_TCK")
    own = children = 0.0
    pending = [(pid, True)]
    while pending:
        current, is_own = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            used = (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [(int(child), False) for child in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
        if is_own:
            own += used
        else:
            children += used
    return own, children


def worker_status(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data


# -- the paths -------------------------------------------------------------------------------------
@contextmanager
def fast_server() -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen([PYTHON, str(Path(__file__).with_name("fast_server.py")), str(port)])
    try:
        wait_for_port(port, process)
        yield port
    finally:
        stop(process)


@dataclass
class Outcome:
    """One path: what it answered over its segments of load, sampled at the end of each."""

    name: str
    url: str
    pid: int
    status: Path | None = None
    running: RunningProxy | None = None
    recording: Path | None = None
    report_path: Path | None = None
    samples: list[Sample] = field(default_factory=list)
    answered: int = 0
    seconds: float = 0.0
    cpu: tuple[float, float] = (0.0, 0.0)
    report_s: float | None = None
    report: dict[str, Any] | None = None

    @property
    def rate(self) -> float:
        """Requests answered a second over its load (the warm-up excluded)."""
        return self.answered / self.seconds if self.seconds else 0.0

    def segment(self, port_path: tuple[int, str], seconds: float, connections: int, since: float) -> None:
        """Load this path for ``seconds``, and sample it at the end."""
        before = cpu_s(self.pid)
        started = time.monotonic()
        samples = asyncio.run(_load(*port_path, seconds, connections, lambda: (0.0, {}, (0.0, 0.0))))
        self.seconds += time.monotonic() - started
        self.answered += samples[-1].answered
        after = cpu_s(self.pid)
        self.cpu = (self.cpu[0] + after[0] - before[0], self.cpu[1] + after[1] - before[1])
        worker = worker_status(self.status) if self.status is not None else {}
        self.samples.append(Sample(time.monotonic() - since, self.answered, rss_mib(self.pid), worker, self.cpu))

    def stop(self) -> None:
        """Stop a judged path as Ctrl-C would; how long its report took, and the report."""
        if self.running is None:
            return
        stopping = time.monotonic()
        self.running.stop(REPORT_LIMIT_S)
        self.report_s = time.monotonic() - stopping
        if self.report_path is not None and self.report_path.exists():
            self.report = json.loads(self.report_path.read_text(encoding="utf-8"))


def _port_of(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _pid_listening(port: int) -> int:
    found = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(found.split("pid=")[1].split(",")[0])


def start_paths(stack: ExitStack, origin: str, folder: Path) -> list[Outcome]:
    """Plain mitmdump, mitmdump with the addon, and mcp-assay proxy, all three running in front of ``origin``."""
    url = stack.enter_context(plain_mitmdump(origin))
    paths = [Outcome("plain mitmdump", url, _pid_listening(_port_of(url)))]
    for kind in ("addon", "proxy"):
        recording, report, status = (folder / f"{kind}.{suffix}" for suffix in ("jsonl", "json", "status.json"))
        env = {STATUS_VARIABLE: str(status)}
        if kind == "addon":
            settings = [f"mcp_assay_record={recording}", f"mcp_assay_report=json:{report}", "mcp_assay_live=off"]
            running = stack.enter_context(mitmdump(origin, *settings, f"mcp_assay_spec_dir={SPEC_DIR}", env=env))
            name = "mitmdump -s addon"
        else:
            options = ["--record", str(recording), "--report", f"json:{report}", "--live", "off"]
            running = stack.enter_context(assay_proxy(f"{origin}/mcp", *options, "--spec-dir", str(SPEC_DIR), env=env))
            name = "mcp-assay proxy"
        paths.append(Outcome(name, running.url, running.process.pid, status, running, recording, report))
    return paths


def validate(recording: Path, folder: Path) -> dict[str, Any]:
    """The JSON report ``mcp-assay validate`` writes for a recording."""
    report = folder / f"{recording.stem}.validate.json"
    command = [PYTHON, "-m", "mcp_assay", "validate", str(recording), "--spec-dir", str(SPEC_DIR)]
    command += ["--report", f"json:{report}", "--fail-on", "never"]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, timeout=3600)
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def unjudged_note(report: dict[str, Any] | None) -> str:
    if report is None:
        return "(no report)"
    found = [note for note in report.get("notes", []) if "did not keep up" in note or "not judged" in note]
    return found[0] if found else ""


def left_unjudged(report: dict[str, Any] | None) -> int | str:
    """The exchanges the report says were left unjudged live (0 when it says none were)."""
    if report is None:
        return "no report"
    found = re.search(r"(\d+) exchange\(s\)", unjudged_note(report))
    return int(found.group(1)) if found else 0


# -- printing --------------------------------------------------------------------------------------
def _timeline(outcome: Outcome) -> None:
    print(f"  {outcome.name}, at the end of its turns: seconds into the load, requests answered, RSS MiB, "
          "worker records received/judged/queued/left unjudged")  # fmt: skip
    previous = 0
    shown = outcome.samples if len(outcome.samples) <= 12 else outcome.samples[:: max(1, len(outcome.samples) // 12)]
    for sample in shown:
        worker = sample.worker
        lag = (
            f"{worker.get('received', '-')}/{worker.get('judged', '-')}/{worker.get('queued', '-')}/"
            f"{worker.get('unjudged', '-')}"
            if worker
            else ""
        )
        print(f"  {sample.second:6.0f} s {sample.answered:>9} {sample.rss_mib:>8.0f}  {lag}")
        previous = sample.answered
    del previous


def bench_saturation(
    seconds: float, connections: int, folder: Path, *, segment: float = 2.0, check: bool = True
) -> list[Outcome]:
    """Run every path at saturation and print the table; the outcomes, for callers that print more.

    The three paths run at once and take turns, ``segment`` seconds of load each (the first of each round
    moving on by one), so a change in the machine's load falls on all of them alike."""
    load = os.getloadavg()[0]
    print(f"\n## proxy at saturation: {connections} connections, {seconds:g} s per path in turns of {segment:g} s "
          f"(load average {load:.1f} on {os.cpu_count()} cores at the start)")  # fmt: skip
    with fast_server() as port, ExitStack() as stack:
        outcomes = start_paths(stack, f"http://127.0.0.1:{port}", folder)
        for outcome in outcomes:
            asyncio.run(_load(_port_of(outcome.url), "/mcp", WARM_UP_S, 2, lambda: (0.0, {}, (0.0, 0.0))))
        since = time.monotonic()
        rounds = max(1, math.ceil(seconds / segment))
        for turn in range(rounds):
            for offset in range(len(outcomes)):
                outcome = outcomes[(turn + offset) % len(outcomes)]
                outcome.segment((_port_of(outcome.url), "/mcp"), segment, connections, since)
        for outcome in outcomes:
            outcome.stop()
        stack.close()
    base = outcomes[0].rate
    print(f"{'path':<22}{'req/s':>8}{'x mitmdump':>12}{'proxy CPU ms':>14}{'worker CPU ms':>15}{'peak RSS MiB':>14}"
          f"{'max queued':>12}{'report s':>10}{'unjudged live':>15}")  # fmt: skip
    for outcome in outcomes:
        peak = max(sample.rss_mib for sample in outcome.samples)
        queued = max((int(sample.worker.get("most_queued", 0)) for sample in outcome.samples), default=0)
        unjudged = left_unjudged(outcome.report)
        report = f"{outcome.report_s:>10.1f}" if outcome.report_s is not None else f"{'':>10}"
        extra = f"{queued:>12}{report}{unjudged!s:>15}" if outcome.report_s is not None else ""
        done = max(1, outcome.answered)
        cpu = outcome.cpu
        print(f"{outcome.name:<22}{outcome.rate:>8.0f}{outcome.rate / base:>12.2f}{cpu[0] * 1000 / done:>14.2f}"
              f"{cpu[1] * 1000 / done:>15.2f}{peak:>14.0f}{extra}")  # fmt: skip
    for outcome in outcomes[1:]:
        _timeline(outcome)
        note = unjudged_note(outcome.report)
        print(f"  report note: {note or '(none: everything was judged live)'}")
        if check and outcome.recording is not None and outcome.report is not None:
            judged = validate(outcome.recording, folder)
            forwarded = outcome.answered
            exchanges = judged.get("stats", {}).get("exchanges", 0)
            verdict = "all there" if exchanges >= forwarded else "MISSING some"
            print(f"  validate of the recording: {exchanges} exchanges judged; the proxy answered at least "
                  f"{forwarded} during the load ({verdict})")  # fmt: skip
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--segment", type=float, default=2.0, help="seconds of each turn of load")
    parser.add_argument("--quick", action="store_true", help="6 s per path: a smoke test")
    parser.add_argument("--no-validate", action="store_true", help="do not validate the recordings afterwards")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mcp-assay-bench-"))
    print(f"mcp-assay saturation benchmark ({time.strftime('%Y-%m-%d')}); files in {folder}")
    seconds = 6.0 if args.quick else args.seconds
    bench_saturation(seconds, args.connections, folder, segment=args.segment, check=not args.no_validate)


if __name__ == "__main__":
    main()
