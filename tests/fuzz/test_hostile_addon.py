"""The mitmproxy addon under hostile traffic drawn by hypothesis: whatever the peers send, the bytes pass
through unchanged and the session ends in a report with a verdict, with no traceback.

A session is a few exchanges between a client and a server as mitmproxy hands them to the addon
(its real hooks, in mitmproxy's own test context). Each answer starts as a valid result of the
schema's shapes (``tests/fuzz/strategies.py``) and is then broken as drawn: a member of another
JSON type or missing, a huge or deeply nested value, another id, a cut body, an event stream that
is not one, a body that is not JSON or not UTF-8, a status no MCP answer has. Requests are broken
the same way, since the addon judges the client too. ``MCP_ASSAY_FUZZ_EXAMPLES`` and
``MCP_ASSAY_FUZZ_RANDOM=1`` search further, as in the other fuzz tests.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.log import MitmLogHandler
from mitmproxy.test import taddons

from mcp_assay.addon.assay import Assay
from tests.addon.test_assay import Harness, flow_of, request_headers, rpc
from tests.fuzz.strategies import METHODS, SHAPES, json_values

EXAMPLES = int(os.environ.get("MCP_ASSAY_FUZZ_EXAMPLES", "25"))
OWN_DEFECTS = ("the check itself failed", "a defect of mcp-assay")

deep = st.sampled_from([40, 900, 5_000]).map(lambda depth: "[" * depth + "]" * depth)
garbage = st.sampled_from([b"", b"{", b"null", b"[]", b"\xff\xfe{}", b"x" * 20_000, b'{"jsonrpc":"2.0"}'])


@st.composite
def answers(draw: st.DrawFn, ident: int, method: str) -> tuple[int, dict[str, str], list[bytes]]:
    """(status, headers, body chunks) of one answer: a valid result, then broken as drawn."""
    result: dict[str, Any] = dict(draw(SHAPES[METHODS[method]]))
    how = draw(st.sampled_from(["faithful", "retype", "drop", "huge", "deep", "id", "garbage"]))
    key = draw(st.sampled_from(sorted(result) or ["resultType"]))
    message: Any = {"jsonrpc": "2.0", "id": ident, "result": result}
    if how == "retype":
        result[key] = draw(json_values)
    elif how == "drop":
        result.pop(key, None)
    elif how == "huge":
        result[key] = "x" * draw(st.sampled_from([5_000, 300_000]))
    elif how == "id":
        message["id"] = draw(st.sampled_from([str(ident), None, 1.5, [ident], {"id": ident}, 10**60]))
    text = json.dumps(message)
    if how == "deep":
        text = text.replace('"result": {', '"result": {"deep": ' + draw(deep) + ", ", 1)
    body = draw(garbage) if how == "garbage" else text.encode()
    status = draw(st.sampled_from([200, 200, 200, 202, 400, 404, 500]))
    if draw(st.booleans()):  # an event stream, cut into chunks anywhere (mid-line, mid-UTF-8)
        framed = b"event: message\ndata: " + body + b"\n\n"
        if draw(st.booleans()):
            framed = framed[: draw(st.integers(0, len(framed)))]
        cuts = sorted(draw(st.lists(st.integers(0, len(framed)), max_size=4)))
        chunks = [framed[start:end] for start, end in zip([0, *cuts], [*cuts, len(framed)], strict=True)]
        return status, {"content-type": "text/event-stream"}, [chunk for chunk in chunks if chunk]
    kind = draw(st.sampled_from(["application/json", "application/json", "text/plain", "application/json; x=1"]))
    return status, {"content-type": kind}, [body]


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[bytes, dict[str, str], tuple[int, dict[str, str], list[bytes]]]]:
    """A few exchanges: (request body, request headers, answer)."""
    exchanges = []
    for ident in range(1, draw(st.integers(1, 4)) + 1):
        method = draw(st.sampled_from(sorted(METHODS)))
        body = rpc(method, ident)
        if draw(st.integers(0, 4)) == 0:  # the client misbehaves too
            body = draw(st.sampled_from([b"{", json.dumps(draw(json_values)).encode(), b"[" + body + b"]"]))
        headers = request_headers(method)
        if draw(st.booleans()):
            headers["mcp-protocol-version"] = draw(st.sampled_from(["2025-11-25", "1999-01-01", "", "2026-07-28 "]))
        exchanges.append((body, headers, draw(answers(ident, method))))
    return exchanges


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("MCP_ASSAY_FUZZ_RANDOM") is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(session=sessions())
def test_hostile_traffic_through_the_addon_ends_in_a_report_and_passes_unchanged(
    spec_path: Path, tmp_path_factory: pytest.TempPathFactory, session: list[Any]
) -> None:
    """Tool-defined (issue 11): bytes forwarded as the peers sent them, a verdict, no traceback."""
    folder = tmp_path_factory.mktemp("addon-fuzz")
    errors = _Errors()
    logger = logging.getLogger("mcp_assay")
    logger.addHandler(errors)
    assay = Assay(in_process=True)
    try:
        with taddons.context(assay) as context:
            report_path = folder / "report.json"
            context.configure(
                assay,
                mcp_assay_spec_dir=str(spec_path),
                mcp_assay_record=str(folder / "recording.jsonl"),
                mcp_assay_report=[f"json:{report_path}"],
            )
            assay.running()
            harness = Harness(assay, context, folder / "recording.jsonl", report_path)
            for body, headers, (status, answer_headers, chunks) in session:
                flow = flow_of(body, headers)
                response = http.Response.make(status, b"".join(chunks), answer_headers)
                streamed = answer_headers["content-type"] == "text/event-stream"
                harness.exchange(flow, response, chunks if streamed else None)  # asserts streamed bytes unchanged
                if not streamed:
                    assert flow.response is not None and flow.response.content == b"".join(chunks)
                assert flow.request.content == body
            report = harness.finish()
    finally:
        logger.removeHandler(errors)
        for handler in list(logging.getLogger().handlers):  # the context's master leaves its handler behind
            if isinstance(handler, MitmLogHandler):
                handler.uninstall()
    assert report["verdict"]["text"]
    own = [f"{item['check']}: {item['reason']}" for item in report["results"] if any(
        defect in item["reason"] for defect in OWN_DEFECTS)]  # fmt: skip
    assert not own, own
    assert not errors.records, [record.getMessage()[:400] for record in errors.records]
