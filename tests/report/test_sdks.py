"""Telling the peer's own code from its SDK's: recognizing the SDK, matching its known findings, counting apart.

Unit tests on hand-built exchanges and verdicts; the command-line paths against the real SDK servers are in
``tests/e2e/test_sdk_blame_e2e.py`` and ``tests/e2e/test_suite_e2e.py``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from mcp_assay.report.about import Target
from mcp_assay.report.build import build_report
from mcp_assay.report.markdown import render_markdown
from mcp_assay.report.model import Report, SdkRecognition, sdk_verdict_part
from mcp_assay.report.sdk_signs import SIGNS, SdkSigns
from mcp_assay.report.sdks import (
    ACCEPT_FLAG,
    AUTO,
    KnownSdkFinding,
    attribute,
    known_sdk,
    known_sdks,
    parse_sdk,
    sdk_hint,
    sdk_line,
)
from mcp_assay.vocabulary.errors import ConfigError
from mcp_assay.vocabulary.verdicts import (
    Evidence,
    ExitCode,
    ExploredInput,
    Level,
    Outcome,
    RequirementText,
    SdkFinding,
    Severity,
    Side,
    Source,
    Verdict,
)
from mcp_assay.wire.jsonrpc import Kind
from tests.factories import error_body, http, legacy_headers, modern_call, request_body, result_body, stdio

MODERN, LEGACY = "2026-07-28", "2025-11-25"
PYTHON = known_sdk("mcp")
TS = known_sdk("@modelcontextprotocol/server")
assert PYTHON is not None and TS is not None


def failure(requirement: str, revision: str = MODERN, *, check: str = "some_check", side: Side = Side.SERVER,
            severity: Severity = Severity.MUST, **extra: Any) -> Verdict:  # fmt: skip
    return Verdict(
        check=check,
        title=f"{requirement} holds",
        requirements=(requirement,),
        level=Level.MUST,
        severity=severity,
        side=side,
        outcome=Outcome.FAILED,
        source=extra.pop("source", Source.ACTIVE),
        reason=f"{requirement} broken",
        revision=revision,
        revisions=(revision,),
        **extra,
    )


def report_of(*results: Verdict, transport: str = "streamable-http") -> Report:
    glossary = {
        ident: RequirementText(id=ident, level="MUST", side="server", summary="…", source=f"clause of {ident}")
        for result in results
        for ident in result.requirements
    }
    return Report(
        results=list(results),
        target=Target(kind="suite", transport=transport),
        tested=[MODERN, LEGACY],
        glossary=glossary,
    )


def python_server(transports: tuple[str, ...] = ("http",)) -> SdkRecognition:
    assert PYTHON is not None
    return SdkRecognition(
        side="server", name="mcp", version=PYTHON.version, label=PYTHON.label, signs=("a sign",), transports=transports
    )


# -- the shipped known findings ----------------------------------------------------------------------------------
def test_the_shipped_findings_name_each_sdk_and_version_and_the_pinned_python_findings() -> None:
    """Tool-defined: the built-in baselines hold the Python SDK's pinned server findings per transport, its client
    findings, and the TypeScript SDK v2's."""
    assert PYTHON is not None and TS is not None
    python = {(f.side, f.transport, f.requirement) for f in PYTHON.findings}
    assert {("server", "stdio", "RPC-12"), ("server", "stdio", "RPC-13"), ("server", "streamable-http", "HTTP-09"),
            ("server", "streamable-http", "RPC-13"), ("client", "", "HS-22")} <= python  # fmt: skip
    assert {f.requirement for f in TS.findings} >= {"HTTP-35", "AUTH-30"}
    assert all(f.behaviour for sdk in known_sdks() for f in sdk.findings), "every finding says what the SDK does"


# -- --sdk ------------------------------------------------------------------------------------------------------
def test_sdk_names_an_sdk_by_package_or_alias_and_none_turns_it_off() -> None:
    assert PYTHON is not None
    assert [sdk.name for sdk in parse_sdk([f"mcp@{PYTHON.version}"]).named] == ["mcp"]
    assert [sdk.name for sdk in parse_sdk([f"python@{PYTHON.version}"]).named] == ["mcp"]
    assert {sdk.name for sdk in parse_sdk(["typescript@2.4.0"]).named} == {
        "@modelcontextprotocol/server",
        "@modelcontextprotocol/client",
    }
    assert parse_sdk(["none"]).off and not parse_sdk(["none"]).recognize
    assert parse_sdk([]).recognize and parse_sdk([], accept=True).accept


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("mcp", "expected NAME@VERSION"),
        ("mcp@", "expected NAME@VERSION"),
        ("@2.3.0", "expected NAME@VERSION"),
        ("mcp@2.3 .0", "expected NAME@VERSION"),
        ("nosuchsdk@1.0", "knows no findings of 'nosuchsdk'"),
        ("mcp@0.0.1", "knows the findings of mcp"),
        ("none,mcp@2.3.0", "cannot be combined"),
    ],
)
def test_a_malformed_or_unknown_sdk_is_one_clear_error(value: str, says: str) -> None:
    with pytest.raises(ConfigError, match="--sdk") as caught:
        parse_sdk([value])
    assert says in str(caught.value)


# -- recognition from what the peer shows --------------------------------------------------------------------------
def missing_session() -> Any:
    body = request_body("tools/list", 3, version=None)
    answer = error_body(-32600, "Bad Request: Missing session ID", ident=None)
    return http(body, answer, status=400, headers=legacy_headers(session=""))


def test_the_python_sdk_is_recognized_from_its_error_text_and_says_where() -> None:
    """Tool-defined: the Python SDK's own error text is a sign; the recognition quotes it with its exchange."""
    signs = SdkSigns()
    exchange = missing_session()
    signs.see(exchange)
    found, notes = signs.recognitions()
    assert notes == []
    assert [(item.side, item.name) for item in found] == [("server", "mcp")]
    assert "'Bad Request: Missing session ID'" in found[0].signs[0] and exchange.id in found[0].signs[0]
    assert found[0].transports == ("http",)
    assert "does not show its version" in found[0].describe()


def test_the_python_sdk_is_recognized_from_its_tool_schemas_in_watched_traffic() -> None:
    """Tool-defined: in ordinary traffic (no error), MCPServer's '<tool>Arguments' schema titles are a sign."""
    tools = {"tools": [{"name": "add", "inputSchema": {"type": "object", "title": "addArguments"}}]}
    signs = SdkSigns()
    signs.see(modern_call("tools/list", {}, tools))
    found, _ = signs.recognitions()
    assert [item.name for item in found] == ["mcp"]
    assert "'addArguments'" in found[0].signs[0]


def test_no_sdk_is_recognized_from_weak_signs_alone() -> None:
    """Tool-defined: a wording others may share ('Tool x not found') is reported beside a strong sign, never alone."""
    weak_only = SdkSigns()
    weak_only.see(http(request_body("tools/call", 4, {"name": "x"}), error_body(-32602, "Tool x not found", ident=4)))
    assert weak_only.recognitions() == ([], [])


def test_an_answer_mcp_assay_injected_is_no_sign_of_the_server() -> None:
    exchange = missing_session()
    probe = {"name": "inject-session-expiry", "injected": True}
    injected = http(
        json.loads(exchange.request.body), error_body(-32600, "Bad Request: Missing session ID", ident=None),
        status=400, headers=legacy_headers(session=""), probe=probe,
    )  # fmt: skip
    signs = SdkSigns()
    signs.see(injected)
    assert signs.recognitions() == ([], [])


def test_signs_of_two_sdks_are_a_note_and_nothing_is_assumed() -> None:
    signs = SdkSigns()
    signs.see(missing_session())
    mismatch = error_body(-32020, "Bad Request: the request headers and body disagree: x", ident=5)
    signs.see(http(request_body("tools/list", 5), mismatch, status=400))
    found, notes = signs.recognitions()
    assert found == []
    assert len(notes) == 1 and "several SDKs" in notes[0] and "--sdk NAME@VERSION" in notes[0]


def test_clients_are_recognized_from_client_info_and_the_discover_probe_id() -> None:
    python = SdkSigns()
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "mcp", "version": "0.1.0"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    python.see(stdio(Side.CLIENT, body))
    assert [(item.side, item.name, item.transports) for item in python.recognitions()[0]] == [
        ("client", "mcp", ("stdio",))
    ]
    ts = SdkSigns()
    ts.see(http(request_body("server/discover", "server-discover-probe-1"), result_body({}, "server-discover-probe-1")))
    assert [(item.side, item.name) for item in ts.recognitions()[0]] == [("client", "@modelcontextprotocol/client")]


def test_recognition_keeps_one_sighting_per_sign_whatever_the_traffic() -> None:
    """Tool-defined: memory stays bounded: a thousand sightings of a sign keep the first."""
    signs = SdkSigns()
    for _ in range(1000):
        signs.see(missing_session())
    (found,), _ = signs.recognitions()
    assert len(found.signs) == 1


def test_a_sign_is_asked_only_of_the_kinds_of_message_it_can_be_found_in() -> None:
    """Counted work: a sign declaring its kinds is never put to another kind of message (a long capture's every
    result is not put to every error wording), and what it finds is found as before."""
    asked: list[str] = []

    def counting(name: str, test: Any) -> Any:
        def counted(message: Any, item: Any) -> Any:
            asked.append(f"{name}:{message.kind.value}")
            return test(message, item)

        return counted

    signs = SdkSigns([replace(sign, test=counting(str(key), sign.test)) for key, sign in enumerate(SIGNS)])
    tools = {"tools": [{"name": "add", "inputSchema": {"type": "object", "title": "addArguments"}}]}
    for _ in range(3):
        signs.see(modern_call("tools/list", {}, tools))
    erring = [str(key) for key, sign in enumerate(SIGNS) if sign.kinds == frozenset({Kind.ERROR})]
    assert erring and not [call for call in asked if call.split(":")[0] in erring]
    assert [item.name for item in signs.recognitions()[0]] == ["mcp"]
    signs.see(missing_session())
    assert any(call.split(":")[0] in erring for call in asked)


def test_no_sign_limited_to_some_kinds_could_be_found_in_another() -> None:
    """A sign's kinds only spare work: each limited sign's test finds nothing in a message of any other kind, even one
    that carries what it looks for under another kind's members."""
    error = {"code": -32600, "message": "Bad Request: Missing session ID"}
    tools = [{"name": "add", "inputSchema": {"title": "addArguments"}}]
    everything = {"name": "mcp-servers/everything"}
    info = {"name": "mcp", "version": "0.1.0"}
    members = {"error": error, "result": {"tools": tools, "serverInfo": everything}, "params": {"clientInfo": info}}
    for kind in Kind:
        message = stdio(Side.SERVER, {"jsonrpc": "2.0", "id": 1, "method": "initialize", **members}).messages[0]
        message = replace(message, kind=kind)
        for sign in SIGNS:
            if sign.kinds is not None and kind not in sign.kinds:
                assert sign.test(message, stdio(Side.SERVER, {})) is None, (sign, kind)


# -- matching and counting apart -------------------------------------------------------------------------------------
def test_a_failure_of_a_known_finding_is_the_sdks_and_others_are_the_servers_own() -> None:
    """Tool-defined: HTTP-09 in 2026-07-28 over HTTP is mcp 2.3.0's; TOOL-10 is the server's own; RPC-12 (known over
    stdio only) on an HTTP server is the server's own too."""
    report = report_of(failure("HTTP-09"), failure("TOOL-10"), failure("RPC-12"))
    attribute(report, AUTO, [python_server()])
    marked = {result.requirements[0]: result.sdk for result in report.results}
    finding = marked["HTTP-09"]
    assert finding is not None and finding.named == f"mcp {PYTHON.version}" and finding.clause == "clause of HTTP-09"
    assert finding.behaviour and "recognized" in finding.recognized
    assert marked["TOOL-10"] is None and marked["RPC-12"] is None
    code, text = report.verdict()
    assert code == "not-conformant" and report.exit_code() is ExitCode.FAILED  # the SDK's failures still count
    assert text.endswith(f"; 1 known in mcp {PYTHON.version}, 2 in the server's own code.")


def test_a_known_finding_matches_only_its_revisions_and_the_recognized_sdk() -> None:
    report = report_of(failure("HTTP-09", LEGACY), failure("HTTP-09"))
    attribute(report, AUTO, [])  # nothing recognized: nothing is the SDK's, and the verdict line is unchanged
    assert all(result.sdk is None for result in report.results)
    assert sdk_verdict_part(report) == ""
    attribute(report, AUTO, [python_server()])
    assert [result.sdk is not None for result in report.results] == [False, True]  # HTTP-09 is pinned in 2026 only


def test_an_explored_finding_matches_only_the_kind_of_input_it_was_pinned_with() -> None:
    """Tool-defined: the SDK's lax coercion is TOOL-14 with a wrong type; a bound the tool ignores is the server's."""
    pinned = KnownSdkFinding(side="server", requirement="TOOL-14", check="invalid_tool_arguments_never_succeed",
                             source="explored", kind="type")  # fmt: skip

    def explored(kind: str, source: Source = Source.EXPLORED) -> Verdict:
        evidence = Evidence(summary="tools/call", explored=ExploredInput(tool="add", kind=kind))
        return failure("TOOL-14", check="invalid_tool_arguments_never_succeed", source=source, evidence=(evidence,))

    assert pinned.matches(explored("type"), ("http",))
    assert not pinned.matches(explored("bound"), ("http",))
    assert not pinned.matches(explored("type", Source.ACTIVE), ("http",))  # the suite's own probe: another finding
    assert not pinned.matches(replace(explored("type"), check="another_check"), ("http",))


def test_accepting_the_sdk_findings_leaves_the_exit_status_to_the_servers_own() -> None:
    """Tool-defined: --accept-sdk-findings marks the SDK's failures known; the server's own still fail the run."""
    choice = parse_sdk([], accept=True)
    only_sdk = report_of(failure("HTTP-09"))
    attribute(only_sdk, choice, [python_server()])
    assert only_sdk.exit_code() is ExitCode.CONFORMANT
    assert only_sdk.results[0].known is not None and ACCEPT_FLAG in only_sdk.results[0].known
    assert only_sdk.verdict()[1].endswith(f"; 1 failure known in mcp {PYTHON.version} accepted.")
    assert sdk_hint(only_sdk) == []
    with_own = report_of(failure("HTTP-09"), failure("TOOL-10"))
    attribute(with_own, choice, [python_server()])
    assert with_own.exit_code() is ExitCode.FAILED
    assert with_own.verdict()[1].endswith(
        f"; 0 known in mcp {PYTHON.version}, 1 in the server's own code; 1 failure known in mcp {PYTHON.version} "
        "accepted."
    )


def test_the_terminal_hint_names_the_one_flag_that_accepts_them() -> None:
    report = report_of(failure("HTTP-09"), failure("TOOL-10"))
    attribute(report, AUTO, [python_server()])
    (line,) = sdk_hint(report)
    assert f"known in mcp {PYTHON.version}" in line and ACCEPT_FLAG in line and "1 failure known" in line


def test_sdk_named_overrides_recognition_and_none_turns_it_off() -> None:
    report = report_of(failure("HTTP-09"))
    attribute(report, parse_sdk([f"mcp@{PYTHON.version}"]), [])
    assert [(item.how, item.side) for item in report.sdks] == [("named", "server")]  # the suite judged no client
    assert report.results[0].sdk is not None
    attribute(report, parse_sdk(["none"]), [python_server()])
    assert report.sdks == [] and report.results[0].sdk is None


def test_a_failure_a_baseline_accepts_keeps_its_reason() -> None:
    report = report_of(replace(failure("HTTP-09"), known="our ticket 12"))
    attribute(report, parse_sdk([], accept=True), [python_server()])
    assert report.results[0].known == "our ticket 12" and report.results[0].sdk is not None


def test_clients_are_counted_apart_from_servers() -> None:
    """Tool-defined: the client's SDK finding is its SDK's, the server's failure its own; a count of zero is said
    once for each kind (here none: both kinds have failures)."""
    client = failure("HS-22", LEGACY, check="clients_reinitialize_after_a_session_404", side=Side.CLIENT)
    report = report_of(client, failure("TOOL-10"))
    recognized = replace(python_server(), side="client")
    attribute(report, AUTO, [recognized])
    assert report.results[0].sdk is not None and report.results[1].sdk is None
    assert sdk_verdict_part(report) == f"1 known in mcp {PYTHON.version}, 1 in the server's own code"


# -- carried through every format ---------------------------------------------------------------------------------
def test_verdict_sdk_and_the_recognition_round_trip_through_json() -> None:
    report = report_of(failure("HTTP-09"), failure("TOOL-10"))
    attribute(report, AUTO, [python_server()])
    data = json.loads(json.dumps(report.to_json()))
    assert data["sdks"][0]["name"] == "mcp" and data["results"][0]["sdk"]["version"] == PYTHON.version
    assert "sdk" not in data["results"][1]  # absent, not null, where no SDK finding matched
    again = Report.from_json(data)
    assert again.results[0].sdk == report.results[0].sdk and again.sdks == report.sdks
    assert again.verdict() == report.verdict()
    assert "sdk" not in report_of(failure("TOOL-10")).to_json()


def test_every_writer_says_whose_failure_it_is() -> None:
    from mcp_assay.report import render

    report = report_of(failure("HTTP-09"))
    attribute(report, AUTO, [python_server()])
    line = sdk_line(report.results[0])
    assert line is not None and line.startswith(
        f"known in mcp {PYTHON.version} (Python SDK), not the server's own code"
    )
    for name in ("terminal", "markdown", "html", "junit", "tap", "sarif"):
        text = render(report, name)
        assert f"mcp {PYTHON.version}" in text or f'"version": "{PYTHON.version}"' in text, name
    assert "SDK: known in mcp" in render_markdown(report)
    assert json.loads(render(report, "sarif"))["runs"][0]["results"][0]["properties"]["sdk"]["name"] == "mcp"


def test_build_report_recognizes_the_sdk_from_the_traffic() -> None:
    signs = SdkSigns()
    signs.see(missing_session())
    report = build_report([failure("HTTP-09")], target=Target(kind="suite", transport="streamable-http"),
                          schemas=[], signs=signs)  # fmt: skip
    assert report.sdks and report.sdks[0].how == "recognized"
    assert isinstance(report.results[0].sdk, SdkFinding)
    off = build_report([failure("HTTP-09")], target=Target(kind="suite"), schemas=[], signs=signs,
                       sdk=parse_sdk(["none"]))  # fmt: skip
    assert off.sdks == [] and off.results[0].sdk is None


def test_a_written_baseline_says_whose_finding_each_is_and_leaves_the_reason_to_the_user(tmp_path: Any) -> None:
    """Tool-defined: --write-baseline leaves every reason empty (accepting is a decision), and its comment names the
    SDK a failure is known in; with the reasons filled in, the file accepts both failures."""
    import yaml

    from mcp_assay.report.baseline import apply_baseline, baseline_text, load_baseline

    report = report_of(failure("RPC-12", check="unparseable_lines_get_parse_error"), failure("TOOL-10"))
    attribute(report, AUTO, [python_server(("stdio",))])
    text = baseline_text(report.results)
    assert [entry["reason"] for entry in yaml.safe_load(text)["known"]] == ["", ""]
    sdk_entry, own_entry = [line for line in text.splitlines() if "reason:" in line]
    assert sdk_entry.endswith(f"— known in mcp {PYTHON.version} (Python SDK)") and "known in" not in own_entry
    path = tmp_path / "baseline.yaml"
    path.write_text(text.replace('reason: ""', 'reason: "our ticket 7"'), encoding="utf-8")
    baseline = load_baseline(path, checks={"unparseable_lines_get_parse_error", "some_check"},
                             requirements={"RPC-12", "TOOL-10"})  # fmt: skip
    apply_baseline(report, baseline)
    assert report.exit_code() is ExitCode.CONFORMANT


def test_report_re_renders_the_attribution_and_takes_the_flags_again(tmp_path: Any) -> None:
    """Tool-defined: `mcp-assay report` reads Verdict.sdk and the recognition back; --accept-sdk-findings and
    --sdk none apply to a report read back, and a malformed --sdk is one usage error."""
    from click.testing import CliRunner

    from mcp_assay.cli import cli

    report = report_of(failure("HTTP-09"), failure("TOOL-10"))
    attribute(report, AUTO, [python_server()])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")
    plain = CliRunner().invoke(cli, ["report", str(path)])
    assert (
        plain.exit_code == 1
        and f"known in mcp {PYTHON.version} (Python SDK), not the server's own code" in plain.output
    )
    accepted = CliRunner().invoke(cli, ["report", str(path), "--accept-sdk-findings", "--report", "json:-"])
    data = json.loads(accepted.output[: accepted.output.rindex("}") + 1])
    assert accepted.exit_code == 1 and data["summary"]["known"] == 1  # TOOL-10 is the server's own: still 1
    off = CliRunner().invoke(cli, ["report", str(path), "--sdk", "none"])
    assert off.exit_code == 1 and "known in mcp" not in off.output
    bad = CliRunner().invoke(cli, ["report", str(path), "--sdk", "mcp"])
    assert bad.exit_code == 2 and "--sdk" in bad.output and "NAME@VERSION" in bad.output


def test_merged_reports_keep_one_recognition_per_side_and_sdk() -> None:
    from mcp_assay.report.model import merge_reports

    first, second = report_of(failure("HTTP-09")), report_of(failure("RPC-13", LEGACY))
    attribute(first, AUTO, [python_server()])
    attribute(second, AUTO, [replace(python_server(("stdio",)), signs=("another sign",))])
    merged = merge_reports([first, second])
    (recognition,) = merged.sdks
    assert recognition.signs == ("a sign", "another sign") and recognition.transports == ("http", "stdio")
    assert all(result.sdk is not None for result in merged.results)


def test_a_failure_the_flag_accepted_says_so_where_a_baseline_would() -> None:
    from mcp_assay.report import render

    report = report_of(failure("HTTP-09"))
    attribute(report, parse_sdk([], accept=True), [python_server()])
    assert f"accepted: known in mcp {PYTHON.version} (Python SDK); accepted with {ACCEPT_FLAG}" in render_markdown(
        report
    )
    assert f"known finding, accepted by the {ACCEPT_FLAG}: " in render(report, "junit")
    assert f"known, accepted by the {ACCEPT_FLAG}: " in render(report, "tap")
    assert "KNOWN (1) — failures a baseline (or --accept-sdk-findings) accepts" in render(report, "terminal")
