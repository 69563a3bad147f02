"""What a merged partial state carries of the other features: unread messages, replays, gateway hops.

Tool-defined (issue 31, merged with the gateway, replay and false-verdict work). A share of a recording
that saw a failure an unread message made *not verified* must not be outvoted by another share's passes;
a replay quoted in evidence is scrubbed of every credential any share learnt; a judge of a gateway's hop
has no partial state (who is at fault depends on the other hop), so ``validate --jobs`` judges recordings
that crossed a gateway's hops together, in one process, and gives the parties one judge gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_assay.cli import cli
from mcp_assay.recording.records import RECORDING_FORMAT, records_of
from mcp_assay.spec.checks import REGISTRY, Check
from mcp_assay.spec.engine import Judge, registered_checks
from mcp_assay.spec.partial import Kept, Partial, TallyState, merge, verdicts
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.replays import Replay
from mcp_assay.vocabulary.verdicts import Evidence, Outcome
from mcp_assay.wire.model import Exchange
from tests.gateway.builders import back, front, in_order, request, result

CHECK = "results_name_their_result_type"
UNTYPED = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
SECRET = "sk-live-0123456789abcdef"


def _check() -> Check:
    registered_checks()
    return REGISTRY[CHECK]


def _partial(state: TallyState, recording: int, secrets: frozenset[str] = frozenset()) -> Partial:
    return Partial(
        checks=(CHECK,),
        tallies={CHECK: state},
        gates={},
        admissions={},
        traffic=True,
        secrets=secrets,
        recording=recording,
    )


def _kept(outcome: Outcome, place: tuple[float, int, int, int], evidence: Evidence | None = None) -> Kept:
    return Kept(place, outcome, f"{outcome.value} here", evidence=evidence, subject=evidence is not None)


def test_a_failure_an_unread_message_hid_stays_not_verified_whatever_passes_elsewhere() -> None:
    unread = TallyState(
        unread=_kept(Outcome.NOT_VERIFIED, (1.0, 0, 4, 0)),
        pending=_kept(Outcome.NOT_VERIFIED, (1.0, 0, 4, 0)),
        exchanges_in_scope=1,
    )
    passing = TallyState(passes=5, last_pass=_kept(Outcome.PASSED, (9.0, 1, 2, 0)), exchanges_in_scope=1)
    merged = merge([_partial(passing, 1), _partial(unread, 0)])
    assert merged.tallies[CHECK].unread is not None
    (verdict,) = verdicts(merged, [_check()])
    assert verdict.outcome is Outcome.NOT_VERIFIED
    assert verdict.reason.endswith(" passed)") and "(5 other " in verdict.reason
    (alone,) = verdicts(_partial(passing, 1), [_check()])
    assert alone.outcome is Outcome.PASSED  # the passes alone do pass: it is the unread failure that holds them back


def test_a_replay_in_evidence_is_scrubbed_of_a_credential_another_share_learnt() -> None:
    replay = Replay(
        transport="http", method="POST", url="http://127.0.0.1:8000/mcp", headers=(("x-api-key", SECRET),), body="{}"
    )
    evidence = Evidence(summary="tools/list answered", replay=replay)
    failing = TallyState(
        failures=(_kept(Outcome.FAILED, (1.0, 0, 1, 0), evidence),),
        failed=1,
        first_failure=_kept(Outcome.FAILED, (1.0, 0, 1, 0)),
        exchanges_in_scope=1,
    )
    merged = merge([_partial(failing, 0), _partial(TallyState(), 1, secrets=frozenset({SECRET}))])
    (verdict,) = verdicts(merged, [_check()])
    assert verdict.outcome is Outcome.FAILED
    (quoted,) = verdict.evidence
    assert quoted.replay is not None
    assert SECRET not in json.dumps(quoted.replay.to_json())
    (unscrubbed,) = verdicts(_partial(failing, 0), [_check()])
    assert unscrubbed.evidence[0].replay is not None and SECRET in str(unscrubbed.evidence[0].replay.headers)


def test_a_judge_of_a_gateways_hop_gives_no_partial_state(spec: SpecSet) -> None:
    judge = Judge(spec, checks=[_check()], blame=lambda check, finding: None)
    with pytest.raises(ValueError, match="gateway"):
        judge.partial()
    with pytest.raises(ValueError, match="gateway"):
        Judge(spec, checks=[_check()], window=10, share=(0, 2), blame=lambda check, finding: None)


def _write(path: Path, exchanges: list[Exchange]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "recording", "format": RECORDING_FORMAT, "source": "test"}) + "\n")
        for exchange in exchanges:
            for record in records_of(exchange):
                handle.write(json.dumps(record) + "\n")
    return path


def _results(spec_path: Path, tmp_path: Path, files: list[Path], jobs: str) -> list[tuple[Any, ...]]:
    out = tmp_path / f"jobs{jobs}.json"
    result = CliRunner().invoke(
        cli,
        ["validate", *map(str, files), "--spec-dir", str(spec_path), "--only", CHECK, "--jobs", jobs,
         "--report", f"json:{out}"],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    return sorted((item["check"], item["outcome"], item.get("party") or "") for item in data["results"])


def test_validate_jobs_judges_a_gateways_hop_recordings_together(spec_path: Path, tmp_path: Path) -> None:
    hops = in_order(
        front(request("tools/list", 7), start=0.0, end=0.2, answer=result(UNTYPED, 7)),
        back(request("tools/list", 1), start=0.01, end=0.1, answer=result(UNTYPED, 1)),
    )
    files = [
        _write(tmp_path / "front.jsonl", [item for item in hops if item.hop is not None and item.hop.value == "front"]),
        _write(tmp_path / "back.jsonl", [item for item in hops if item.hop is not None and item.hop.value == "back"]),
    ]
    one = _results(spec_path, tmp_path, files, "1")
    assert one == _results(spec_path, tmp_path, files, "2")
    failed = [item for item in one if item[1] == "failed"]
    assert failed and {item[2] for item in failed} == {"server"}  # the upstream's fault, on both hops
