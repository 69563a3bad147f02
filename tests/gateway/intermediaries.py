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
import time
from pathlib import Path
from typing import Any

from tests.peers.assay import assay_proxy
from tests.peers.gateway import survey
from tests.peers.intermediaries import RECIPES, running
from tests.peers.process import PYTHON
from tests.peers.topology import ROOT, tap_command

__all__ = ["judged", "main"]


def _drive(target: Any, modes: tuple[str, ...], env: dict[str, str]) -> None:
    front = ["stdio", "--command", " ".join(target.stdio)] if target.url is None else [target.url]
    for mode, steps in [(modes[0], "all"), *((mode, "smoke") for mode in modes[1:])]:
        command = [PYTHON, "-m", "tests.peers.gateway.sdk_drive", front[0], mode, *front[1:], "--upstream", "witness",
                   "--steps", steps]  # fmt: skip
        subprocess.run(command, capture_output=True, timeout=200, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT), **env})  # fmt: skip


def _survey(url: str) -> None:
    for probe in (survey.origin, survey.unknown_method, survey.bad_json):
        try:
            probe(url, True)
        except Exception:  # noqa: BLE001 - what the intermediary did is in the recording either way
            continue


def judged(name: str, folder: Path) -> dict[str, Any]:
    """The JSON report of ``validate`` over both hops of ``name`` after the SDK client and the survey crossed it."""
    recipe = RECIPES[name]
    front, back = folder / "front.jsonl", folder / "back.jsonl"
    spec = ["--spec-dir", os.environ["MCP_ASSAY_SPEC_DIR"]]  # a bridge may spawn its server without our environment

    def proxy(hop: str, record: Path) -> Any:
        return lambda url: assay_proxy(url, "--hop", hop, "--record", str(record), "--live", "off")

    watchers: dict[str, Any] = {}
    if recipe.direction == "http-to-http":
        watchers = {"front": proxy("front", front), "back": proxy("back", back)}
    elif recipe.direction == "stdio-to-http":
        watchers = {"front": proxy("front", front), "stdio_back": tap_command("--hop", "back", "--record", str(back),
                                                                              "--live", "off", *spec)}  # fmt: skip
    else:
        watchers = {"back": proxy("back", back)}
    with running(name, "witness", config_dir=folder, **watchers) as target:
        if recipe.direction == "http-to-stdio":
            assert target.stdio is not None
            wrapped = tap_command("--hop", "front", "--record", str(front), "--live", "off", *spec)(target.stdio)
            target = type(target)(target.recipe, None, wrapped, target.upstream_url, target.env)
        _drive(target, recipe.modes, target.env)
        if target.url is not None:
            _survey(target.url)
        time.sleep(0.5)
        for hop in target.__dict__.get("hops", {}).values():
            del hop
    deadline = time.monotonic() + 20
    while not (front.exists() and back.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    # a bridge that spawns a server per request leaves one tap recording each (back-2.jsonl, back-3.jsonl ...)
    backs = sorted(folder.glob("back*.jsonl"))
    report = folder / "report.json"
    subprocess.run([PYTHON, "-m", "mcp_assay", "validate", str(front), *map(str, backs), "--report", f"json:{report}"],
                   capture_output=True, timeout=300, cwd=ROOT)  # fmt: skip
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def main(names: list[str]) -> None:
    """``python -m tests.gateway.intermediaries NAME...``: each intermediary judged on both hops, its failures (but
    notes) printed as ``REQUIREMENTS@party`` with the check and its reason, to review before any is pinned."""
    import sys
    import tempfile

    from tests.peers.intermediaries import installed

    for name in names or sorted(RECIPES):
        installed(RECIPES[name])
        with tempfile.TemporaryDirectory() as folder:
            report = judged(name, Path(folder))
        print(f"== {name}: {report['verdict']['text']}")
        for item in report["results"]:
            if item["outcome"] == "failed" and item["severity"] != "info":
                print(f"  {','.join(item['requirements'])}@{item.get('party')} {item['check']}: {item.get('reason')}")
        sys.stdout.flush()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
