"""The recipes in docs/development.md are true: followed on a scratch copy of the tree, they register what they say.

Tool-defined (issue 30). Each recipe lists the hand-written files it touches and shows its worked example in
blocks marked ``file=<path>``. This test reads the page: every listed file exists, a recipe touches at most
four, and the example blocks, written into a copy of ``src/`` the way the recipe says (a case declared
before its family's ``CASES``, anything else added at the end of its module, a new module created), give a
tree in which the new requirement, rule, case and fault are each registered where the recipe says, and the
project's own registry tests still pass. A recipe that no longer matches the code fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "development.md"
RECIPES = ("Add a requirement", "Add a rule", "Add a probe case", "Add a fault (toward the client)")
BLOCK = re.compile(r"^```(\w+) file=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
LISTED = re.compile(r"^\d+\. `([^`]+)`", re.MULTILINE)
DECLARED_CASES = "\nCASES = tuple(declare.cases)"
NAMED_MODULES = "from . import "


def _sections() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for title in RECIPES:
        start = text.index(f"\n### {title}\n")
        end = text.find("\n## ", start + 1)
        following = text.find("\n### ", start + 1)
        ends = [place for place in (end, following) if place != -1]
        found[title] = text[start : min(ends) if ends else len(text)]
    return found


def _concrete(path: str) -> str:
    """A listed path with its placeholder filled as the worked example fills it."""
    return path.replace("<family>", "recipe_sampling").replace("<area>/<module>", "cancellation/requests")


def test_every_recipe_lists_at_most_four_files_and_each_exists_or_is_made_by_the_example() -> None:
    made = {path for _, path, _ in BLOCK.findall(PAGE.read_text(encoding="utf-8"))}
    for title, section in _sections().items():
        listed = [_concrete(path) for path in LISTED.findall(section)]
        assert 1 <= len(listed) <= 4, (title, listed)
        for path in listed:
            assert (ROOT / path).exists() or path in made, f"{title}: {path} does not exist"


def test_the_commands_the_recipes_give_name_files_that_exist() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Recipes") :]
    named = set(re.findall(r"\btests/[\w/]+\.py\b", section))
    assert named, "the recipes name no test file: the scan is broken"
    for path in sorted(named):
        assert (ROOT / path).exists(), path
    for test in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", section):
        assert f"def {test[1]}(" in (ROOT / test[0]).read_text(encoding="utf-8"), test


def _next_number(prefix: str) -> str:
    numbers = [int(found) for found in re.findall(rf"^- id: {prefix}-(\d+)$", _catalogue_text(), re.MULTILINE)]
    return f"{prefix}-{max(numbers) + 1:02d}"


def _catalogue_text() -> str:
    return (ROOT / "src" / "mcp_assay" / "spec" / "requirements.yaml").read_text(encoding="utf-8")


def _follow(scratch: Path) -> str:
    """Apply every example block of the page to the scratch tree; the new requirement's ID."""
    ident = _next_number("PRM")
    for _, path, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        target = scratch / path
        body = body.replace("PRM-NN", ident)
        if not target.exists():
            target.write_text(body, encoding="utf-8")
            continue
        text = target.read_text(encoding="utf-8")
        if body.startswith(NAMED_MODULES) and NAMED_MODULES in text:  # the module list, given whole
            text = text[: text.index(NAMED_MODULES)] + body
        elif DECLARED_CASES in text and "declare(" in body:
            text = text.replace(DECLARED_CASES, "\n" + body.rstrip("\n") + DECLARED_CASES, 1)
        else:
            text = text.rstrip("\n") + ("\n" if path.endswith(".yaml") else "\n\n\n") + body
        target.write_text(text, encoding="utf-8")
    return ident


CHECKS = """
import sys
from pathlib import Path

import mcp_assay

assert Path(mcp_assay.__file__).is_relative_to(Path(sys.argv[1])), mcp_assay.__file__
ident = sys.argv[2]

from mcp_assay.spec import rules  # noqa: F401
from mcp_assay.spec.checks import REGISTRY
from mcp_assay.spec.requirements import catalogue
from mcp_assay.vocabulary.verdicts import Severity

entry = catalogue()[ident]
assert entry.qualifier == "inferred" and entry.severity is Severity.SHOULD, entry
rule = REGISTRY["prompt_arguments_that_are_not_strings_get_invalid_params"]
assert rule.requirements == (ident,), rule

from mcp_assay.cases import BY_FAMILY
from mcp_assay.cases import prompts as cases
from mcp_assay.cases.model import left_unsent
from mcp_assay.suite.probes import FAMILIES

assert cases.NOT_STRING_ARGUMENT in BY_FAMILY["prompts"]
assert ident in next(family for family in FAMILIES if family.name == "prompts").requirements
assert ident in left_unsent(cases.CASES, cases.LIST)

import json
from mcp_assay.addon.inject import RequestFacts, build_plan, parse_families
from mcp_assay.addon.inject.table import render

(family,) = parse_families("recipe-sampling")
plan = build_plan({family}, transport="http")
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "_meta": meta}}
facts = RequestFacts.of(json.dumps(body).encode(), transport="http")
assert plan is not None and facts is not None
met = plan.claim(facts, "c") or next(iter(plan.candidates(facts)), None)
assert met is not None and met.name == "inject-recipe-sampling-held-call", met
without = json.loads(json.dumps(body))
without["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {}
other = RequestFacts.of(json.dumps(without).encode(), transport="http")
assert other is not None and not met.matches(other), "the point reads the declared capabilities"
assert "inject-recipe-sampling-held-call" in render()

sys.path.append(sys.argv[3])  # the project's tests, run against the scratch tree
from tests.spec import test_catalogue
from tests import test_cases
from tests.addon import test_inject_registry

for module, names in (
    (test_catalogue, ("test_the_catalogue_has_every_requirement_once",
                      "test_the_catalogue_ids_are_numbered_without_gaps_per_prefix",
                      "test_every_check_cites_known_requirements_at_their_level",
                      "test_a_check_takes_its_side_and_transports_from_the_catalogue",
                      "test_every_requirement_without_a_check_says_why",
                      "test_every_check_title_is_a_whole_sentence")),
    (test_cases, ("test_every_actively_observed_requirement_is_fed_by_a_case_or_a_known_gap",
                  "test_every_case_feeds_known_requirements_each_judged_by_a_check",
                  "test_every_case_is_sent_and_every_case_a_rule_judges_is_sent",
                  "test_a_case_a_rule_must_pick_out_is_picked_out_by_one",
                  "test_a_family_s_requirements_are_what_its_cases_feed")),
    (test_inject_registry, ("test_every_case_is_judged_by_registered_checks_of_client_requirements_where_it_lands",
                            "test_the_cases_are_tried_in_rank_order_and_each_name_and_era_is_one_case",
                            "test_every_client_requirement_is_fed_by_a_fault_or_classified")),
):
    for name in names:
        getattr(module, name)()
print("followed")
"""


def test_the_recipes_followed_on_a_scratch_copy_register_a_requirement_a_rule_a_case_and_a_fault(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "src"
    # the compiled modules come along (their sources keep their times): only what the recipes change compiles again
    shutil.copytree(ROOT / "src", scratch, ignore=shutil.ignore_patterns("*.egg-info"))
    ident = _follow(tmp_path)
    script = tmp_path / "checks.py"
    script.write_text(textwrap.dedent(CHECKS), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    result = subprocess.run(
        [sys.executable, str(script), str(scratch), ident, str(ROOT)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0 and "followed" in result.stdout, result.stderr[-3000:]


def test_a_recipe_that_drifts_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a recipe whose example names a helper that is not where it says breaks the copy."""
    page = tmp_path / "development.md"
    page.write_text(PAGE.read_text(encoding="utf-8").replace("needs=LIST", "needs=NO_SUCH_CASE"), encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PAGE", page)
    with pytest.raises(AssertionError, match="NO_SUCH_CASE"):
        test_the_recipes_followed_on_a_scratch_copy_register_a_requirement_a_rule_a_case_and_a_fault(tmp_path)


def test_contributing_points_to_each_recipe() -> None:
    """The repository's CONTRIBUTING.md sends a newcomer to the recipes (its links are checked in test_readme)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for title in RECIPES:
        anchor = re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
        assert f"docs/development.md#{anchor}" in text, title
