"""What exploring sends: edges of a schema, hypothesis's draws, and the failing examples kept between runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcp_assay.spec.toolschema import validate_instance
from mcp_assay.suite.explore import draws
from mcp_assay.suite.explore.edges import LONG, NON_ASCII, edges, full, plain
from mcp_assay.suite.explore.examples import KEEP, Example, ExampleStore, explore_cache

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"enum": ["draft", "archived"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "query": {"type": "string", "maxLength": 200},
        "site": {"type": "string", "format": "uri"},
        "contact": {"type": "string", "format": "email"},
    },
    "required": ["limit"],
    "additionalProperties": False,
}


def test_edges_are_inside_the_schema_and_reach_its_bounds_members_and_non_ascii_text() -> None:
    """Tool-defined: every edge validates strictly; bounds, enum members, the longest string and non-ASCII are there."""
    found = edges(SCHEMA)
    for _, arguments in found:
        assert validate_instance(SCHEMA, arguments, strict=True).ok, arguments
    values = [arguments for _, arguments in found]
    assert {"limit": 50} in values and {"limit": 1} not in values  # the plainest arguments are sent first, apart
    assert {"limit": 1, "status": "archived"} in values
    assert {"limit": 1, "query": "x" * 200} in values
    assert {"limit": 1, "query": NON_ASCII} in values
    assert plain(SCHEMA) == {"limit": 1}
    assert full(SCHEMA) is not None and set(full(SCHEMA) or {}) == set(SCHEMA["properties"])


def test_an_unbounded_string_gets_a_long_value() -> None:
    """Tool-defined: with no maxLength, a long string of LONG characters is tried."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert {"q": "x" * LONG} in [arguments for _, arguments in edges(schema)]


def test_the_same_seed_draws_the_same_arguments_and_another_seed_others() -> None:
    """Tool-defined: a printed seed reproduces the draws (hypothesis, no database)."""
    first = draws.draw(SCHEMA, 20, seed=11)
    assert first.reason == "" and len(first.arguments) >= 10
    assert draws.draw(SCHEMA, 20, seed=11).arguments == first.arguments
    assert draws.draw(SCHEMA, 20, seed=12).arguments != first.arguments
    for arguments in first.arguments:
        assert validate_instance(SCHEMA, arguments, strict=True).ok, arguments


def test_drawn_places_stay_in_the_documentation_ranges() -> None:
    """Tool-defined: nothing leaves the target: URIs and e-mail addresses name example.com only."""
    drawn = draws.draw(SCHEMA, 60, seed=3).arguments
    sites = [arguments["site"] for arguments in drawn if "site" in arguments]
    contacts = [arguments["contact"] for arguments in drawn if "contact" in arguments]
    assert sites and all(site.startswith("https://example.com/") for site in sites)
    assert contacts and all(contact.endswith("@example.com") for contact in contacts)


def test_a_schema_the_library_cannot_draw_from_gives_a_reason_not_a_crash() -> None:
    """Tool-defined: an unresolvable reference is reported, and exploring goes on with edges and mutations."""
    found = draws.draw({"type": "object", "properties": {"x": {"$ref": "https://elsewhere.invalid/s.json"}}}, 5, 1)
    assert found.arguments == ()
    assert found.reason.startswith(("hypothesis-jsonschema cannot draw from it", "hypothesis"))


def test_explore_without_its_extra_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool-defined: a missing extra is a usage error naming the install command."""
    monkeypatch.setattr(draws, "available", lambda: False)
    with pytest.raises(Exception) as caught:
        draws.require()
    assert str(caught.value) == "--explore needs hypothesis and hypothesis-jsonschema: pip install 'mcp-assay[explore]'"


def test_kept_examples_come_back_newest_first_and_a_changed_schema_starts_afresh(tmp_path: Path) -> None:
    """Tool-defined: failing examples live in the user cache, keyed by target, tool and schema."""
    store = ExampleStore(tmp_path, "http://127.0.0.1:1/mcp", "list_drafts", SCHEMA)
    assert store.load() == []
    assert store.save([Example({"limit": 0}, "bound", ("invalid_tool_arguments_never_succeed",))]) is None
    assert store.save([Example({"status": "archived", "limit": 1}, "inside", ("structured",))]) is None
    assert [example.arguments for example in store.load()] == [{"status": "archived", "limit": 1}, {"limit": 0}]
    assert store.load()[1].kind == "bound"
    other = ExampleStore(tmp_path, "http://127.0.0.1:1/mcp", "list_drafts", {**SCHEMA, "required": []})
    assert other.load() == []
    store.save([Example({"limit": n}, "bound", ()) for n in range(100, 100 + 2 * KEEP)])
    assert len(store.load()) == KEEP
    assert "127.0.0.1" not in store.path.name and "list_drafts" not in store.path.name


def test_an_unreadable_store_is_passed_over(tmp_path: Path) -> None:
    """Tool-defined: a damaged cache file costs nothing but the kept examples."""
    store = ExampleStore(tmp_path, "t", "tool", SCHEMA)
    store.path.write_text("{not json", encoding="utf-8")
    assert store.load() == []
    store.path.write_text(json.dumps({"examples": [{"arguments": [1]}, "x", {"arguments": {"a": 1}}]}), "utf-8")
    assert [example.arguments for example in store.load()] == [{"a": 1}]


def test_the_cache_is_under_xdg_cache_home(tmp_path: Path) -> None:
    """Tool-defined: the user cache, as the schemas' is (tests isolate XDG_CACHE_HOME)."""
    assert explore_cache({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "mcp-assay" / "explore"
    assert explore_cache({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "mcp-assay" / "explore"


DRAW = """
import json, sys
sys.path.insert(0, ".")
if len(sys.argv) > 1:
    import noise  # a module of the working folder, full of constants hypothesis would otherwise offer
from mcp_assay.suite.explore.draws import available, draw
assert available()  # as `run --explore` asks first
schema = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
print(json.dumps(draw(schema, 40, 5).arguments, sort_keys=True))
"""
NOISE = (
    "WORDS = "
    + repr([f"constant-{number}" for number in range(200)])
    + "\nNUMBERS = "
    + repr(list(range(7000, 7200)))
    + "\n"
)


def test_draws_depend_on_the_seed_alone_and_write_nothing_in_the_working_folder(tmp_path: Path) -> None:
    """Tool-defined: the same seed draws the same arguments whatever else the process loaded (hypothesis's constants
    of local modules are left out), and hypothesis's own files go to the user cache, not the working folder."""
    import subprocess
    import sys

    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "noise.py").write_text(NOISE, encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", DRAW, *extra], cwd=folder, env=env, capture_output=True, text=True, timeout=60
        )
        for extra in ([], ["noise"])
    ]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    assert runs[0].stdout == runs[1].stdout
    assert not (folder / ".hypothesis").exists()
    assert (tmp_path / "xdg" / "mcp-assay" / "explore" / "hypothesis").is_dir()


def test_drawing_stops_at_its_deadline_with_what_it_drew() -> None:
    """Issue 28 (--explore-time 3 ran 8.5 s: a CPU-bound stall drawing): a draw past its deadline ends at once."""
    import time

    started = time.monotonic()
    drawn = draws.draw(SCHEMA, 500, 7, deadline=started)
    assert drawn.arguments == () and "share of --explore-time" in drawn.reason
    assert draws.draw(SCHEMA, 5, 7, deadline=None).arguments  # no deadline: drawn as before


def test_the_cache_keeps_the_input_that_failed_not_only_its_shrunk_form() -> None:
    """Issue 28: the example cache kept {"text": "k"} (answered) for a hang on "k\\x8b": the input the search saw fail
    is always kept; its shrunk form only when the reported call failed the same way again."""
    from mcp_assay.suite.explore.family import _kept
    from mcp_assay.suite.explore.oracle import NO_ANSWER, Failure, Verdict
    from mcp_assay.suite.explore.search import Candidate, Found
    from mcp_assay.suite.explore.shrink import Shrunk

    hang = Failure(NO_ANSWER, (), "no answer came within --timeout")
    found = Found((hang,), Candidate({"text": "k\x8b"}, "inside", "edge"))
    found.shrunk = Shrunk({"text": "k"}, ("text: ascii",), 2)
    found.reported = Verdict((), answered=True)  # the shrunk input was answered: it is not the failure
    assert [example.arguments for example in _kept(found)] == [{"text": "k\x8b"}]
    found.reported = Verdict((hang,), answered=False)
    assert [example.arguments for example in _kept(found)] == [{"text": "k"}, {"text": "k\x8b"}]
