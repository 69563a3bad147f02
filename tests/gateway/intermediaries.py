"""A published intermediary between the official SDK client and a reference server, both hops watched by mcp-assay.

Each hop is recorded by the mcp-assay command that fits it, as a user would: ``mcp-assay proxy --hop`` on an
HTTP hop, ``mcp-assay tap --hop`` around a stdio process (the server an HTTP-to-stdio bridge spawns, or the
bridge a client spawns); ``mcp-assay validate`` then judges the two recordings as one gateway. The traffic is
the SDK client in every mode the intermediary's front speaks (``tests.peers.gateway.sdk_drive``) and, on an
HTTP front, the survey's probes of what the issue found published intermediaries do (a foreign Origin, an
unknown method, a body that is not JSON).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.peers.assay import assay_proxy
from tests.peers.gateway import survey
from tests.peers.intermediaries import RECIPES, running
from tests.peers.process import PYTHON
from tests.peers.topology import ROOT, tap_command

__all__ = ["Crossing", "hop_of", "judged", "main"]


@dataclass(frozen=True)
class Crossing:
    """What one run through an intermediary gave: the SDK client's steps, per mode, and ``validate``'s JSON report."""

    steps: dict[str, dict[str, dict[str, Any]]]
    """mode -> step -> ``{"ok", "detail"}`` as ``sdk_drive`` printed them."""
    report: dict[str, Any]


def hop_of(result: dict[str, Any]) -> str:
    """The hop a result of the JSON report judged: ``both`` for a GW row (it compares the two), else the hop of its
    evidence (``front``, ``back``; ``?`` when its evidence names none)."""
    if all(ident.startswith("GW-") for ident in result["requirements"]):
        return "both"
    hops = {item.get("hop") for item in result["evidence"]} - {None}
    return hops.pop() if len(hops) == 1 else "?" if not hops else "+".join(sorted(hops))


def _drive(target: Any, modes: tuple[str, ...], env: dict[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """The SDK client through the front in every mode it speaks: every step in the first, the smoke steps in the rest
    (one process for all of them)."""
    front = ["stdio", "--command", " ".join(target.stdio)] if target.url is None else [target.url]
    plan = ",".join(f"{mode}:{'all' if index == 0 else 'smoke'}" for index, mode in enumerate(modes))
    command = [PYTHON, "-m", "tests.peers.gateway.sdk_drive", front[0], plan, *front[1:], "--upstream", "witness"]
    done = subprocess.run(command, capture_output=True, timeout=200, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})  # fmt: skip
    steps: dict[str, dict[str, dict[str, Any]]] = {}
    for line in done.stdout.decode().splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            steps.setdefault(item["mode"], {})[item["step"]] = item
    assert steps, done.stderr.decode()[-2000:]
    return steps


def _survey(url: str) -> None:
    """The probes each marked with its case (``X-Mcp-Assay-Probe``): judged as ``run`` judges them, never blamed on
    the client that sent them."""
    for probe in (survey.origin, survey.unknown_method, survey.bad_json):
        try:
            probe(url, True)
        except Exception:  # noqa: BLE001 - what the intermediary did is in the recording either way
            continue


def judged(name: str, folder: Path) -> Crossing:
    """The SDK client and the survey through ``name`` with both hops recorded, then ``validate`` over both."""
    recipe = RECIPES[name]
    front, back = folder / "front.jsonl", folder / "back.jsonl"
    spec = ["--spec-dir", os.environ["MCP_ASSAY_SPEC_DIR"]]  # a bridge may spawn its server without our environment

    def proxy(hop: str, record: Path) -> Any:
        return lambda url: assay_proxy(url, "--hop", hop, "--record", str(record), "--live", "off")

    def tap(hop: str, record: Path) -> Any:
        return tap_command("--hop", hop, "--record", str(record), "--live", "off", *spec)

    watchers: dict[str, Any] = {}
    if recipe.direction == "http-to-http":
        watchers = {"front": proxy("front", front), "back": proxy("back", back)}
    elif recipe.direction == "stdio-to-http":
        watchers = {"front": proxy("front", front), "stdio_back": tap("back", back)}
    else:
        watchers = {"back": proxy("back", back)}
    with running(name, "witness", config_dir=folder, **watchers) as target:
        if recipe.direction == "http-to-stdio":
            assert target.stdio is not None
            target = replace(target, stdio=tap("front", front)(target.stdio))
        steps = _drive(target, recipe.modes, target.env)
        if target.url is not None:
            _survey(target.url)
    deadline = time.monotonic() + 20
    while not (front.exists() and back.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    # a bridge that spawns a server per request leaves one tap recording each (back-2.jsonl, back-3.jsonl ...)
    backs = sorted(folder.glob("back*.jsonl"))
    report = folder / "report.json"
    subprocess.run([PYTHON, "-m", "mcp_assay", "validate", str(front), *map(str, backs), "--report", f"json:{report}"],
                   capture_output=True, timeout=300, cwd=ROOT)  # fmt: skip
    return Crossing(steps, json.loads(report.read_text()))


def main(argv: list[str]) -> None:
    """``python -m tests.gateway.intermediaries [--keep DIR] NAME...``: each intermediary judged on both hops, its
    failures (but notes) printed as ``REQUIREMENTS@party(hop)`` with the check and its reason, to review before any
    is pinned; ``--keep`` leaves the recordings and the report in ``DIR/NAME``."""
    import tempfile

    from tests.peers.intermediaries import installed

    keep = None
    if argv[:1] == ["--keep"]:
        keep, argv = Path(argv[1]), argv[2:]
    for name in argv or sorted(RECIPES):
        installed(RECIPES[name])
        with tempfile.TemporaryDirectory() as scratch:
            folder = keep / name if keep is not None else Path(scratch)
            folder.mkdir(parents=True, exist_ok=True)
            crossing = judged(name, folder)
        report = crossing.report
        print(f"== {name}: {report['verdict']['text']}")
        for mode, steps in crossing.steps.items():
            print(f"  {mode}: failed steps {sorted(step for step, line in steps.items() if not line['ok'])}")
        for item in report["results"]:
            if item["outcome"] == "failed" and item["severity"] != "info":
                where = f"{','.join(item['requirements'])}@{item.get('party')}({hop_of(item)})"
                print(f"  {item['severity']} {where} {item['check']}: {item.get('reason')}")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
