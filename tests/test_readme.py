"""The README and docs/ say what the code does, and every link in them leads somewhere.

Issue 19 asks for a README that fits on a few screens and starts where a new user is; issue 18 for
its exit-code table to be the one the code uses. These tests hold the documentation to that: the
README's length and first screen, every relative link and ``#anchor`` in ``README.md`` and
``docs/*.md``, the exit-code table against :class:`~mcp_assay.vocabulary.verdicts.ExitCode` and the verdict
codes :meth:`Report.verdict` returns, every option table against the click command it describes,
every ``mcp-assay`` command line shown in a shell block against the CLI, and the known findings
against the files the end-to-end tests pin them in.
"""

from __future__ import annotations

import ast
import inspect
import re
import shlex
import unicodedata
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import click
import pytest
import yaml

from mcp_assay.cli import cli
from mcp_assay.report import model
from mcp_assay.report.model import BaselineStatus, FailOn, Report
from mcp_assay.vocabulary.verdicts import ExitCode
from tests.report.sample import failed_must, not_verified, passed

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, ROOT / "CONTRIBUTING.md", *DOCS]
MAX_LINES = 350
FIRST_SCREEN = 40
"""Lines a terminal or a browser shows before scrolling, give or take."""

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SHELL_FENCES = {"bash", "sh", "shell", "console"}


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


# -- reading markdown ------------------------------------------------------------------------------
def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def code_blocks(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each fenced block: its info string (``bash``, or ``""``) and its lines."""
    info: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        match = FENCE.match(line)
        if match and info is None:
            info, lines = line.strip()[3:].strip().lower(), []
        elif match:
            yield info or "", lines
            info = None
        elif info is not None:
            lines.append(line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    kept = "".join(
        char for char in text if char in " -_" or unicodedata.category(char)[0] in "LN"
    )  # letters, digits, spaces, hyphens and underscores; GitHub drops the rest
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page's headings make, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> Iterator[tuple[int, str]]:
    """Every link target written in a page's prose (inline code and code blocks are not links)."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            yield number, match.group(1)


def table_after(path: Path, marker: str) -> list[list[str]]:
    """The rows (cells stripped, header and rule left out) of the table that follows ``<!-- marker -->``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- {marker} -->") + 1
    rows: list[list[str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert len(rows) > 2, f"{page_id(path)}: no table after <!-- {marker} -->"
    return rows[2:]


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


# -- the README ------------------------------------------------------------------------------------
def test_the_readme_stays_under_350_lines() -> None:
    """Issue 19: the long sections live in docs/, so the README stays short enough to read."""
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count < MAX_LINES, f"README.md has {count} lines; move detail to docs/"


def test_the_first_screen_goes_from_what_it_is_to_a_run_against_your_own_server() -> None:
    """Issue 19: what the tool is, the install from a clone (Python 3.12 named, PyPI ruled out), the
    schemas, the demo and the lines that test one's own server come first, in that order; then the contents."""
    lines = README.read_text(encoding="utf-8").splitlines()
    screen = "\n".join(lines[:FIRST_SCREEN])
    steps = [
        "Model Context Protocol",
        "Python 3.12 or newer",
        "not on PyPI",
        "git clone",
        "pip install -e '.[explore]'",  # issue 27: the README shows --explore, so the install brings its extra
        "mcp-assay spec pull",
        "MCP_ASSAY_SPEC_DIR",
        "mcp-assay demo",
        "mcp-assay run -u http://",
        "mcp-assay run -c ",
    ]
    at = 0
    for step in steps:  # each after the one before it
        found = screen.find(step, at)
        assert found != -1, f"the first {FIRST_SCREEN} lines do not say {step!r} after {screen[:at][-60:]!r}"
        at = found + len(step)
    assert sum(line.startswith("mcp-assay run ") for line in lines[:FIRST_SCREEN]) == 3
    contents = lines.index("## Contents")
    assert contents < FIRST_SCREEN + 5
    assert lines.index("## Quick start") < contents


def test_the_main_job_comes_before_the_contributor_material() -> None:
    """Issue 19: testing one's own server is told before anything about developing mcp-assay."""
    text = README.read_text(encoding="utf-8")
    assert text.index("## Test your own server") < text.index("## Words used here")
    assert "pytest -p" not in text and "## Development" not in text and "## Architecture" not in text


# -- links -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_names_a_file_and_every_anchor_a_heading(page: Path) -> None:
    """Tool-defined: a link into the repository leads to a file that exists, and ``#anchor`` to a heading in it."""
    broken = []
    for number, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: … are not this repository's
            continue
        path_part, _, anchor = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        if not file.exists():
            broken.append(f"line {number}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"line {number}: {target} (no heading makes #{anchor})")
        elif anchor and file.suffix != ".md":
            broken.append(f"line {number}: {target} (an anchor into a file that is not markdown)")
    assert not broken, f"{page_id(page)}:\n" + "\n".join(broken)


def test_the_link_check_finds_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    """The check can fail: a missing file and a missing heading are both found, a good link is not."""
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## A `code` heading: yes\n", encoding="utf-8")
    page.write_text(
        "# Page\n[ok](there.md#a-code-heading-yes) [gone](missing.md) [bad](there.md#nowhere) [self](#page)\n"
        "```\n[not a link](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    found = {target for _, target in links(page)}
    assert found == {"there.md#a-code-heading-yes", "missing.md", "there.md#nowhere", "#page"}
    assert "a-code-heading-yes" in anchors(tmp_path / "there.md")
    assert "nowhere" not in anchors(tmp_path / "there.md") and "page" in anchors(page)


def test_slugs_follow_githubs_rules() -> None:
    assert slug("Test your own server: `mcp-assay run`") == "test-your-own-server-mcp-assay-run"
    assert slug("Starting the server for the run: `--serve`") == "starting-the-server-for-the-run---serve"
    assert slug("Testing a sign-in: the stub's policy options") == "testing-a-sign-in-the-stubs-policy-options"


# -- exit codes ------------------------------------------------------------------------------------
def verdict_codes_in_the_code() -> set[str]:
    """Every code :meth:`Report.verdict` can return, read from its source."""
    source = inspect.getsource(model)
    tree = ast.parse(source)
    report = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Report")
    verdict = next(node for node in report.body if isinstance(node, ast.FunctionDef) and node.name == "verdict")
    codes = set()
    for node in ast.walk(verdict):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            first = node.value.elts[0]
            assert isinstance(first, ast.Constant) and isinstance(first.value, str)
            codes.add(first.value)
    return codes


def one_report_per_verdict() -> list[Report]:
    """A report reaching each verdict code."""
    return [
        Report([passed()]),
        Report([passed(), not_verified()]),
        Report([failed_must(), passed()]),
        Report([passed()], baseline=BaselineStatus(path="baseline.yaml", known=0, stale=("HTTP-09",))),
        Report([not_verified()]),
        Report([replace(passed())], unjudged="nothing listens at 127.0.0.1:9"),
    ]


def test_the_exit_code_table_is_the_one_the_code_uses() -> None:
    """Issue 18: every exit code of ExitCode has its row, and each verdict code sits in the row of the exit
    code a report with that verdict really gives."""
    rows = {int(row[0]): ticked(row[1]) for row in table_after(README, "exit-codes")}
    assert set(rows) == {code.value for code in ExitCode}
    assert rows[ExitCode.USAGE] == [], "a usage error writes no report, so it has no verdict code"
    listed = {code: exit_code for exit_code, codes in rows.items() for code in codes}
    assert set(listed) == verdict_codes_in_the_code()
    reached = set()
    for report in one_report_per_verdict():
        code, _ = report.verdict()
        reached.add(code)
        assert listed[code] == report.exit_code(), (code, report.exit_code())
    assert reached == set(listed), "a verdict code in the table no sample report reaches"
    silenced = Report([failed_must()], fail_on=FailOn.NEVER)
    assert silenced.verdict()[0] == "not-conformant" and silenced.exit_code() == ExitCode.CONFORMANT
    assert "`--fail-on never` keeps the verdict but exits 0" in README.read_text(encoding="utf-8")


# -- option tables ---------------------------------------------------------------------------------
def command(path: str) -> click.Command:
    found: click.Command = cli
    for name in path.split():
        assert isinstance(found, click.Group)
        found = found.commands[name]
    return found


def options(of: click.Command) -> dict[str, click.Option]:
    """Each option's names (``-u``, ``--url``, ``--no-interactive`` …) to the option."""
    named: dict[str, click.Option] = {}
    for param in of.params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                named[name] = param
    return named


def option_tables() -> Iterator[tuple[Path, str, bool]]:
    for page in PAGES:
        for marker in re.findall(r"<!-- flags: ([a-z -]+?)( \(part\))? -->", page.read_text(encoding="utf-8")):
            yield page, marker[0], bool(marker[1])


@pytest.mark.parametrize(("page", "name", "part"), list(option_tables()), ids=lambda value: str(value))
def test_an_option_table_lists_the_options_the_command_has_with_their_environment_twins(
    page: Path, name: str, part: bool
) -> None:
    """Tool-defined: a table marked ``<!-- flags: run -->`` names every option of ``mcp-assay run`` and no other,
    each with the environment variable it really reads (``(part)``: the rows it has are right)."""
    has = options(command(name))
    marker = f"flags: {name}{' (part)' if part else ''}"
    seen: set[str] = set()
    for row in table_after(page, marker):
        names = [word for word in ticked(row[0]) if word.startswith("-")]
        assert names, row
        for option_name in names:
            assert option_name in has, f"{page_id(page)}: mcp-assay {name} has no {option_name}"
            assert has[option_name].envvar in ticked(row[1]), (option_name, has[option_name].envvar, row[1])
            seen.add(option_name)
    if not part:
        assert seen == set(has), f"{page_id(page)}: missing {sorted(set(has) - seen)}"


def test_the_readme_has_the_whole_table_of_run_options() -> None:
    assert (README, "run", False) in list(option_tables())


# -- command lines ---------------------------------------------------------------------------------
def shell_commands(lines: list[str], *, prompted: bool) -> Iterator[list[str]]:
    """The ``mcp-assay`` command lines of a block, split as the shell splits them. In a shell block every
    line counts (continuations joined, heredocs and comments left out); elsewhere only ``$ `` lines."""
    joined: list[str] = []
    heredoc: str | None = None
    carry = ""
    for line in lines:
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        if prompted:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line.rstrip().endswith("\\"):
            carry += line.rstrip()[:-1] + " "
            continue
        joined.append(carry + line)
        carry = ""
        end = re.search(r"<<-?\s*'?(\w+)'?", line)
        if end:
            heredoc = end.group(1)
    for line in joined:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        current: list[str] = []
        for word in [*words, ";"]:
            if word and set(word) <= set(";&|<>()"):
                while current and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", current[0]):
                    current.pop(0)  # an environment prefix: NAME=value mcp-assay …
                if current and current[0] == "mcp-assay":
                    yield current
                current = []
            else:
                current.append(word)


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    """The click command ``mcp-assay WORDS...`` names, and the words after its name (group options skipped)."""
    found: click.Command = cli
    rest = words[1:]
    while isinstance(found, click.Group) and rest:
        if rest[0].startswith("-"):
            option = options(found).get(rest[0].split("=")[0])
            assert option is not None, f"mcp-assay has no {rest[0]} ({' '.join(words)})"
            rest = rest[1:] if option.is_flag or "=" in rest[0] else rest[2:]
            continue
        assert rest[0] in found.commands, f"mcp-assay has no command {rest[0]!r} ({' '.join(words)})"
        found, rest = found.commands[rest[0]], rest[1:]
    return found, rest


def shown_commands() -> Iterator[tuple[Path, list[str]]]:
    for page in PAGES:
        for info, lines in code_blocks(page.read_text(encoding="utf-8")):
            for words in shell_commands(lines, prompted=info not in SHELL_FENCES):
                yield page, words


def test_every_command_line_shown_names_commands_and_options_that_exist() -> None:
    """Tool-defined: each ``mcp-assay`` command in a shell block (or after ``$ `` in an output block) names a
    command that exists, and every option it gives is one that command has."""
    checked = 0
    for page, words in shown_commands():
        found, rest = resolve(words)
        has = {*options(found), "-h", "--help"}
        for word in rest:
            if word == "--":
                break
            if word.startswith("-") and len(word) > 1:
                assert word.split("=")[0] in has, f"{page_id(page)}: {' '.join(words)}: no option {word}"
        checked += 1
    assert checked > 30, "the command lines in the docs were not found"


def test_the_command_line_check_catches_an_unknown_option_and_command() -> None:
    lines = ["mcp-assay run -u http://x/mcp --no-such-flag \\", "  --report json:r.json   # a comment"]
    (words,) = list(shell_commands(lines, prompted=False))
    found, rest = resolve(words)
    assert found is command("run") and "--no-such-flag" in rest and "--no-such-flag" not in options(found)
    with pytest.raises(AssertionError, match="no command"):
        resolve(["mcp-assay", "nosuch"])
    prompted = ["$ MCP_ASSAY_TIMEOUT=nan mcp-assay run -u x", "mcp-assay: not judged — …"]
    assert list(shell_commands(prompted, prompted=True)) == [["mcp-assay", "run", "-u", "x"]]


# -- known findings --------------------------------------------------------------------------------
KNOWN_FINDINGS = ROOT / "docs" / "known-findings.md"
E2E = ROOT / "tests" / "e2e"


def test_every_pinned_finding_is_explained_in_docs() -> None:
    """Every requirement the end-to-end tests pin for a reference server, a reference client or a published
    server is named in docs/known-findings.md."""
    text = KNOWN_FINDINGS.read_text(encoding="utf-8")
    pinned: set[str] = set()
    for per_revision in yaml.safe_load((E2E / "suite_expected.yaml").read_text(encoding="utf-8")).values():
        pinned.update(requirement for ids in per_revision.values() for requirement in ids)
    for entries in yaml.safe_load((E2E / "inject_expected.yaml").read_text(encoding="utf-8")).values():
        pinned.update(entry["requirement"] for entry in entries)
    for server in yaml.safe_load((E2E / "corpus_expected.yaml").read_text(encoding="utf-8")).values():
        pinned.update(requirement for failures in server["failures"].values() for requirement in failures)
    assert pinned, "nothing pinned was read"
    assert not {requirement for requirement in pinned if requirement not in text}


def test_the_corpus_table_is_the_pinned_corpus() -> None:
    """The table of published servers lists, per server and revision, exactly the failures pinned for it."""
    corpus = yaml.safe_load((E2E / "corpus_expected.yaml").read_text(encoding="utf-8"))
    lines = KNOWN_FINDINGS.read_text(encoding="utf-8").splitlines()
    header = next(n for n, line in enumerate(lines) if line.startswith("| server | built on"))
    columns = [cell.strip() for cell in lines[header].strip("|").split("|")][2:]
    table: dict[str, dict[str, set[str]]] = {}
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = ticked(cells[0])[0].split("/")[-1]
        table[name] = {
            revision: set(re.findall(r"[A-Z]+-\d+", cell)) for revision, cell in zip(columns, cells[2:], strict=True)
        }
    assert set(table) == set(corpus)
    for name, server in corpus.items():
        for revision in columns:
            pinned = {str(key): failures for key, failures in server["failures"].items()}  # YAML reads dates
            assert table[name][revision] == set(pinned.get(revision, {})), (name, revision)
