"""`mcp-assay spec pull --check`: whether upstream publishes revisions or schema changes the pins lack.

Tool-defined (issue 28, "Knowing which revisions exist"): the check reads the source `spec pull` reads (here a
local mirror, as on an air-gapped machine; there is no internet here) at the branch head: each pinned schema for
a change (told in `$defs` when the pinned file is on disk) and the schema folder's listing for revisions newer
than the pins. The exit status is for a scheduled CI job: 0 nothing new, 1 something the pins lack, 3 not
everything could be checked; a usage mistake is 2. Nothing is written.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcp_assay.cli import cli
from tests.peers.process import free_port
from tests.peers.spec_mirror import SpecMirror, spec_mirror

PINNED = ("2025-11-25", "2026-07-28")


def _folder(spec_path: Path, into: Path) -> Path:
    """A copy of the pinned schemas, as a mirror of upstream's head that has not moved since the pins."""
    for revision in PINNED:
        (into / revision).mkdir(parents=True)
        shutil.copy(spec_path / revision / "schema.json", into / revision / "schema.json")
    return into


@pytest.fixture
def upstream(spec_path: Path, tmp_path: Path) -> Iterator[tuple[Path, SpecMirror]]:
    folder = _folder(spec_path, tmp_path / "upstream")
    with spec_mirror(folder) as served:
        yield folder, served


def check(served: SpecMirror, *args: str, cache: Path | None = None) -> Result:
    index = served.template.split("/{revision}")[0] + "/index.json"
    return CliRunner().invoke(
        cli,
        ["spec", "pull", "--check", "--mirror", served.template, "--index", index, "--timeout", "5", *args],
        env={"MCP_ASSAY_CACHE_DIR": str(cache or Path("/nonexistent-cache")), "MCP_ASSAY_SPEC_DIR": None,
             "COLUMNS": "300"},
    )  # fmt: skip


def test_an_upstream_that_has_not_moved_exits_0(upstream: tuple[Path, SpecMirror], tmp_path: Path) -> None:
    folder, served = upstream
    result = check(served)
    assert result.exit_code == 0, result.output
    assert [line.split()[:2] for line in result.stdout.splitlines()[1:3]] == [
        ["unchanged", "2025-11-25"], ["unchanged", "2026-07-28"],
    ]  # fmt: skip
    assert "the pins hold every revision and schema upstream publishes" in result.stdout
    assert sorted(served.hits) == ["/2025-11-25/schema.json", "/2026-07-28/schema.json", "/index.json"]
    assert not (tmp_path / "nonexistent-cache").exists()  # nothing written


def test_a_new_revision_and_a_changed_schema_exit_1_and_say_what_changed(
    upstream: tuple[Path, SpecMirror], spec_path: Path, tmp_path: Path
) -> None:
    folder, served = upstream
    schema = json.loads((folder / "2026-07-28" / "schema.json").read_text(encoding="utf-8"))
    schema["$defs"]["FreshlyAddedThing"] = {"type": "object"}
    removed = sorted(schema["$defs"])[0]
    del schema["$defs"][removed]
    (folder / "2026-07-28" / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    (folder / "2027-03-01").mkdir()
    (folder / "2027-03-01" / "schema.json").write_text(json.dumps({"$defs": {}}), encoding="utf-8")
    (folder / "2024-11-05").mkdir()  # older than the window: left out on purpose, not news
    (folder / "2024-11-05" / "schema.json").write_text("{}", encoding="utf-8")
    cache = _folder(spec_path, tmp_path / "cache")  # the pinned files on disk: the change is told in $defs
    result = check(served, cache=cache)
    assert result.exit_code == 1, result.output
    lines = {line.split()[1]: line for line in result.stdout.splitlines() if line.split()[:1] != ["compared"]
             and len(line.split()) > 1 and line.split()[1][:2] == "20"}  # fmt: skip
    assert lines["2025-11-25"].startswith("unchanged")
    assert (
        lines["2026-07-28"].startswith("changed") and "the schema at main is not the pinned one" in lines["2026-07-28"]
    )
    assert f"$defs: added 1 (FreshlyAddedThing); removed 1 ({removed})" in lines["2026-07-28"]
    assert lines["2027-03-01"].startswith("new") and "published upstream, not pinned" in lines["2027-03-01"]
    assert "2024-11-05" not in lines
    assert "upstream publishes what the pins lack" in result.stdout


def test_without_the_pinned_file_on_disk_the_change_is_still_said(upstream: tuple[Path, SpecMirror]) -> None:
    folder, served = upstream
    (folder / "2025-11-25" / "schema.json").write_text('{"$defs": {}}', encoding="utf-8")
    result = check(served)
    assert result.exit_code == 1, result.output
    assert "pull the pinned schema (mcp-assay spec pull) to see which definitions changed" in result.stdout


def test_a_pinned_revision_gone_from_upstream_exits_1(upstream: tuple[Path, SpecMirror]) -> None:
    folder, served = upstream
    shutil.rmtree(folder / "2025-11-25")
    result = check(served)
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stdout.splitlines() if "2025-11-25" in line]
    assert line.startswith("gone") and "not found (404)" in line


def test_a_mirror_without_a_listing_cannot_say_whether_revisions_are_new_and_exits_3(
    upstream: tuple[Path, SpecMirror],
) -> None:
    _, served = upstream
    result = CliRunner().invoke(
        cli, ["spec", "pull", "--check", "--mirror", served.template, "--timeout", "5"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 3, result.output
    assert "new revisions not looked for" in result.stdout and "give --index URL" in result.stdout
    assert "/index.json" not in served.hits


def test_an_unreachable_upstream_exits_3_with_what_failed() -> None:
    template = f"http://127.0.0.1:{free_port()}/{{revision}}/schema.json"
    index = template.replace("{revision}/schema.json", "index.json")
    result = CliRunner().invoke(
        cli, ["spec", "pull", "--check", "--mirror", template, "--index", index, "--timeout", "2"],
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert result.stdout.count("failed") >= 2 and "not everything could be checked" in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--check", "--force"], "--force has nothing to do"),
        (["--index", "http://127.0.0.1:9/i"], "--index is read by --check only"),
    ],
)
def test_check_with_what_it_does_not_take_is_a_usage_error(args: list[str], said: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["spec", "pull", "--cache-dir", str(tmp_path), *args])
    assert result.exit_code == 2 and said in result.stderr, result.output


def test_a_mirror_and_index_with_credentials_are_read_and_never_printed(upstream: tuple[Path, SpecMirror]) -> None:
    """Tool-defined (issue 28, secrets in URLs): a mirror behind `user:password@` (or an index with a `?token=`) is
    used as given, and every line `spec pull` and `spec pull --check` print names it with the password REDACTED."""
    _, served = upstream
    secret, token = "mirror-pw-4f1", "index-token-77c"
    template = served.template.replace("http://", f"http://bob:{secret}@")
    index = template.split("/{revision}")[0] + f"/index.json?token={token}"
    checked = CliRunner().invoke(
        cli, ["spec", "pull", "--check", "--mirror", template, "--index", index, "--timeout", "5"],
        env={"COLUMNS": "300", "MCP_ASSAY_CACHE_DIR": "/nonexistent-cache", "GITHUB_TOKEN": "gh-token-never-sent"},
    )  # fmt: skip
    assert checked.exit_code == 0, checked.output
    assert "compared the pins with http://bob:REDACTED@127.0.0.1" in checked.stdout
    basic = "Basic " + base64.b64encode(f"bob:{secret}".encode()).decode()
    assert served.authorizations and set(served.authorizations) == {basic}  # as bob; GITHUB_TOKEN is GitHub's only
    gone = template.replace("/{revision}/", "/gone-{revision}/")  # every download fails and names its URL
    pulled = CliRunner().invoke(cli, ["spec", "pull", "--mirror", gone, "--timeout", "5"],
                                env={"MCP_ASSAY_CACHE_DIR": "/nonexistent-cache", "COLUMNS": "300"})  # fmt: skip
    assert pulled.exit_code == 3 and "http://bob:REDACTED@127.0.0.1" in pulled.stdout, pulled.output
    for text in (checked.output, pulled.output):
        assert secret not in text and token not in text, text
