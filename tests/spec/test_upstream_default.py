"""`spec pull --check` without a mirror: what it asks GitHub for, and who gets GITHUB_TOKEN.

Tool-defined (issue 28, "Knowing which revisions exist"). There is no internet here, so GitHub is stood in for by
an httpx transport answering as raw.githubusercontent.com and the contents API do (their URL shapes and the
contents API's list of ``{"name", "type"}`` objects are GitHub's documented ones). The mirror path runs against a
real loopback server in tests/cli/test_spec_check.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from mcp_assay.spec import upstream
from mcp_assay.spec.sources import load_pins

REPOSITORY = "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/schema"
LISTING = "https://api.github.com/repos/modelcontextprotocol/modelcontextprotocol/contents/schema?ref=main"


def test_without_a_mirror_it_reads_the_branch_head_and_the_contents_api_and_only_github_gets_the_token(
    spec_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str | None]] = []
    names = ["2024-11-05", "2025-11-25", "2026-07-28", "2027-03-01", "draft"]

    def answer(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        seen.append((url, request.headers.get("authorization")))
        if url == LISTING:
            return httpx.Response(200, json=[{"name": name, "type": "dir"} for name in names])
        revision = url.removeprefix(REPOSITORY + "/").split("/")[0]
        file = spec_path / revision / "schema.json"
        return httpx.Response(200, content=file.read_bytes()) if file.is_file() else httpx.Response(404)

    real = httpx.Client
    monkeypatch.setattr(upstream.httpx, "Client", lambda **kw: real(**kw, transport=httpx.MockTransport(answer)))
    monkeypatch.setenv("GITHUB_TOKEN", "gh-test-token")
    result = upstream.check_upstream(folders=[spec_path])
    statuses = {item.revision: item.status for item in result.findings}
    assert statuses == {"2025-11-25": "unchanged", "2026-07-28": "unchanged", "2027-03-01": "new"}
    assert "no schema yet" in next(item.detail for item in result.findings if item.revision == "2027-03-01")
    assert result.exit_code == 1 and result.source == "modelcontextprotocol/modelcontextprotocol at main"
    assert {url for url, _ in seen} == {LISTING, *(f"{REPOSITORY}/{name}/schema.json" for name in
                                                   ("2025-11-25", "2026-07-28", "2027-03-01"))}  # fmt: skip
    assert [auth for url, auth in seen if url == LISTING] == ["Bearer gh-test-token"]
    assert all(auth is None for url, auth in seen if url != LISTING)  # raw files never get the token
    assert set(load_pins()) == {"2025-11-25", "2026-07-28"}


def test_a_listing_that_is_not_a_list_is_said_and_exits_3(monkeypatch: pytest.MonkeyPatch, spec_path: Path) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if str(request.url) == LISTING:
            return httpx.Response(200, content=json.dumps({"message": "API rate limit exceeded"}).encode())
        revision = str(request.url).removeprefix(REPOSITORY + "/").split("/")[0]
        return httpx.Response(200, content=(spec_path / revision / "schema.json").read_bytes())

    real = httpx.Client
    monkeypatch.setattr(upstream.httpx, "Client", lambda **kw: real(**kw, transport=httpx.MockTransport(answer)))
    result = upstream.check_upstream()
    assert result.exit_code == 3 and result.unlisted == f"{LISTING}: not a JSON list of the schema folder"
