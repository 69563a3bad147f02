"""Reading a recording does the work repeated on every record once: counted, never timed.

A long capture names a few URLs and a few ``Content-Type`` values hundreds of thousands of times; the
reader keeps what it worked out of each (in bounded tables) instead of parsing it again per record.
Each test counts the parsing a recording costs, so it fails when the table is gone, and fills the
table past its bound, so it fails when the table grows without one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_assay.recording import readers
from mcp_assay.recording.records import RecordingWriter, stream_recording
from mcp_assay.recording.redaction import Redactor
from mcp_assay.wire import model
from tests.counting import count_calls
from tests.factories import modern_call

REQUESTS = 40


def _recording(path: Path, urls: list[str]) -> Path:
    writer = RecordingWriter(path, Redactor(), source="test")
    for number, url in enumerate(urls, start=1):
        writer.exchange(modern_call("tools/list", {}, {"tools": []}, ident=number, url=url))
    writer.close()
    return path


def test_each_url_of_a_recording_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: reading N requests to one URL splits that URL once, not N times."""
    urls = ["http://127.0.0.1:8000/mcp"] * REQUESTS + ["http://127.0.0.1:8001/other"] * REQUESTS
    path = _recording(tmp_path / "r.jsonl", urls)
    monkeypatch.setattr(readers, "_URLS", {})
    split = count_calls(monkeypatch, readers, "urlsplit")
    exchanges = list(stream_recording(path, []))
    assert len(exchanges) == 2 * REQUESTS
    assert sorted(split) == ["http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/other"]


def test_each_request_path_is_split_once_per_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: every exchange read asks its request's path (is it a ``.well-known`` document?); N requests to
    one URL split it once, and the paths are what splitting gives."""
    urls = ["http://127.0.0.1:8000/mcp"] * REQUESTS + ["http://127.0.0.1:8001"] * REQUESTS
    path = _recording(tmp_path / "r.jsonl", urls)
    monkeypatch.setattr(model, "_PATHS", {})  # (writing the recording asked them already)
    split = count_calls(monkeypatch, model, "urlsplit")
    exchanges = list(stream_recording(path, []))
    assert [exchange.request.path for exchange in exchanges] == ["/mcp"] * REQUESTS + ["/"] * REQUESTS  # type: ignore[union-attr]
    assert sorted(split) == ["http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001"]


def test_the_path_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: past its bound the table of paths stops growing, and each path is still right."""
    monkeypatch.setattr(model, "_PATHS", {})
    for number in range(model.PATHS_KEPT + 10):
        request = model.HttpRequest(method="GET", url=f"http://h/p{number}", headers=model.Headers(), body=b"", time=0)
        assert request.path == f"/p{number}"
    assert len(model._PATHS) == model.PATHS_KEPT


def test_the_url_table_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a recording naming more URLs than the table keeps reads them all, each URL past the bound
    parsed again when it comes back, and the table stops at its bound."""
    monkeypatch.setattr(readers, "_URLS", {})
    distinct = [f"http://127.0.0.1:8000/mcp/{number}" for number in range(readers.URLS_KEPT + 10)]
    path = _recording(tmp_path / "r.jsonl", distinct + distinct[-3:])
    split = count_calls(monkeypatch, readers, "urlsplit")
    exchanges = list(stream_recording(path, []))
    assert [exchange.request.url for exchange in exchanges] == distinct + distinct[-3:]  # type: ignore[union-attr]
    assert len(readers._URLS) == readers.URLS_KEPT
    assert len(split) == len(distinct) + 3


def test_a_url_read_from_the_table_is_what_parsing_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a URL the table answers reads as parsing it would, an unreadable one included."""
    monkeypatch.setattr(readers, "_URLS", {})
    for text in ("http://u:[REDACTED]@h:1/p", "http://h:99999/", "http://h/p?q=1", "http://[::1/"):
        assert readers.readable_url(text) == readers.readable_url(text) == readers._parsed_url(text)
    assert readers.readable_url("http://u:[REDACTED]@h:1/p") == "http://u:REDACTED@h:1/p"
    assert readers.readable_url("http://h:99999/") is None


class _CountedNames(model._Lowered):
    """The table of lower-cased header names, counting the names it had to lower."""

    lowered: list[str]

    def __missing__(self, name: str) -> str:
        self.lowered.append(name)
        return super().__missing__(name)


def test_each_header_name_is_lowered_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: every header block read indexes its names lower-cased; N exchanges naming the same headers
    lower each name once, and look-ups find the values whatever the case asked."""
    path = _recording(tmp_path / "r.jsonl", ["http://127.0.0.1:8000/mcp"] * REQUESTS)
    names = _CountedNames()
    names.lowered = []
    monkeypatch.setattr(model, "_LOWER", names)
    exchanges = list(stream_recording(path, []))
    assert len(exchanges) == REQUESTS
    written = {name for exchange in exchanges for name in exchange.request.headers.names()}  # type: ignore[union-attr]
    written |= {name for exchange in exchanges for name in exchange.response.headers.names()}  # type: ignore[union-attr]
    assert sorted(names.lowered) == sorted(written)
    request = exchanges[0].request  # type: ignore[union-attr]
    assert request.headers.get("CONTENT-TYPE") == request.headers.get("content-type") == "application/json"


def test_the_header_name_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a peer naming ever new headers (or very long ones) fills the table to its bound, no further."""
    monkeypatch.setattr(model, "_LOWER", model._Lowered())
    headers = model.Headers([(f"X-Name-{number}", "v") for number in range(model.NAMES_KEPT + 10)])
    long = "X-" + "L" * model.NAME_KEPT_LENGTH
    assert model.Headers([(long, "v")]).get(long) == "v"
    assert headers.get(f"x-name-{model.NAMES_KEPT + 9}") == "v"
    assert len(model._LOWER) == model.NAMES_KEPT
    assert long not in model._LOWER


def test_a_get_of_the_same_url_is_told_from_an_authorization_request_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a listening stream is a GET of one URL again and again; each asks whether it is an OAuth
    authorization request (and whether it is a ``.well-known`` document), and the URL is split once for each."""
    monkeypatch.setattr(model, "_PATHS", {})
    monkeypatch.setattr(model, "_AUTHORIZATIONS", {})
    split = count_calls(monkeypatch, model, "urlsplit")
    asked = "http://h/authorize?response_type=code&client_id=c"
    for url in ["http://h/mcp"] * REQUESTS + [asked] * REQUESTS:
        request = model.HttpRequest(method="GET", url=url, headers=model.Headers(), body=b"", time=0)
        exchange = model.HttpExchange.build(id="g", request=request)
        assert model.oauth_kind(request) == (model.OAUTH_AUTHORIZATION if url == asked else None)
        assert exchange.messages == ()
    assert sorted(split) == sorted(["http://h/mcp", "http://h/mcp", asked, asked])


def test_a_header_block_answers_with_the_first_value_of_a_name_whatever_its_case() -> None:
    """Tool-defined: a block indexes each name's first value (a repeated name, in any case, keeps the first),
    lists every value in wire order, and knows the media type its first ``Content-Type`` names."""
    block = model.Headers(
        [("Accept", "a"), ("X-Two", "1"), ("content-TYPE", "Text/Event-Stream; q=1"), ("x-two", "2"),
         ("Content-Type", "application/json"), ("X-TWO", "3")]
    )  # fmt: skip
    assert block.get("x-two") == block.get("X-Two") == "1"
    assert block.get_all("X-two") == ["1", "2", "3"]
    assert block.get("content-type") == "Text/Event-Stream; q=1"
    assert block.media_type() == "text/event-stream"
    assert block.get("missing", "none") == "none" and block.get_all("missing") == []
    single = model.Headers([("Accept", "a"), ("Content-Type", "application/json")])
    assert (single.get("ACCEPT"), single.get_all("accept"), single.media_type()) == ("a", ["a"], "application/json")
