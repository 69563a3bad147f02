"""Gather the package's loose top-level modules into folders named for what they hold, and give repeated file
names their room: ``git mv`` each file, then rewrite every reference to the old module names and paths.

Why a script and not one commit: several branches change the same tree at once, and a move made on one of
them collides with every edit the others make to the moved files. This script is run again on the merged
tree instead, so the move lands last and whole. It is idempotent: a file already at its new place is left
there, and a reference already rewritten is not rewritten again, so a second run changes nothing.

Run it from the repository root (the tree may hold uncommitted changes; commit the result as one commit)::

    .venv/bin/python scripts/relayout.py            # move, rewrite, sort imports, format
    .venv/bin/python scripts/relayout.py --verify   # the same, then ruff, mypy --strict and test collection
    .venv/bin/python scripts/relayout.py --dry-run  # say what would move and which files would change

What it rewrites, in the files git tracks under ``src/``, ``tests/``, ``docs/``, ``examples/``, ``.ci/`` and
the top-level ``*.md`` and ``pyproject.toml`` (this script excepted):

* dotted module names (``mcp_assay.wire.Probe``, ``import mcp_assay.errors as errors``, ``"mcp_assay.sse"``);
* ``from mcp_assay import jsontext`` for a moved top-level module;
* paths (``src/mcp_assay/jsontext.py``, ``cases/facts.py``; a bare top-level name such as ``wire.py`` only
  where no other file of the new tree has that name);
* relative references inside a renamed module's own folder (``:class:`~.facts.Point```).
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "mcp_assay"
SELF = Path(__file__).resolve()

MOVES: dict[str, str] = {
    # the vocabulary: the words every part shares
    "protocol.py": "vocabulary/protocol.py",
    "verdicts.py": "vocabulary/verdicts.py",
    "replays.py": "vocabulary/replays.py",
    "shell.py": "vocabulary/shell.py",
    "errors.py": "vocabulary/errors.py",
    # the wire model and its readers
    "jsontext.py": "wire/jsontext.py",
    "jsonrpc.py": "wire/jsonrpc.py",
    "sse.py": "wire/sse.py",
    "lines.py": "wire/lines.py",
    "wire.py": "wire/model.py",
    "traffic.py": "wire/traffic.py",
    "hops.py": "wire/hops.py",
    "faults.py": "wire/faults.py",
    # the recording, and what else mcp-assay writes
    "recording.py": "recording/records.py",
    "record_readers.py": "recording/readers.py",
    "redaction.py": "recording/redaction.py",
    "inputs.py": "recording/inputs.py",
    "presence.py": "recording/presence.py",
    "audit.py": "recording/audit.py",
    "notes.py": "recording/notes.py",
    "logs.py": "recording/logs.py",
    # what a user hands mcp-assay
    "values.py": "userinput/values.py",
    "userfiles.py": "userinput/files.py",
    # file names that say their room (no four session.py, five _common.py, three facts.py)
    "suite/session.py": "suite/era_clients.py",
    "suite/stub/session.py": "suite/stub/lifetime.py",
    "demo/session.py": "demo/client_session.py",
    "cases/facts.py": "cases/sending.py",
    "addon/inject/facts.py": "addon/inject/points.py",
    "addon/inject/case.py": "addon/inject/fault.py",
    "spec/rules/http/_common.py": "spec/rules/http/_exchanges.py",
    "spec/rules/mrtr/_common.py": "spec/rules/mrtr/_retries.py",
    "spec/rules/cancellation/_common.py": "spec/rules/cancellation/_scope.py",
    "spec/rules/versions/_common.py": "spec/rules/versions/_eras.py",
    "suite/probes/_common.py": "suite/probes/_lists.py",
}
"""Old path -> new path, both relative to ``src/mcp_assay``."""

ROOM_DOCS: dict[str, str] = {
    "vocabulary": "The words every part of mcp-assay shares: the protocol's names (headers, ``_meta`` keys,\n"
    "error codes, eras, revisions), verdicts and their replays, shell words, and mcp-assay's own errors.\n\n"
    "The lowest room of the core: it imports nothing else of mcp-assay (``tests/test_architecture.py``).",
    "wire": "One model of what crossed the wire, and its readers: JSON text, JSON-RPC messages, event streams, lines,\n"
    "the exchange model (:mod:`.model`), the exchange log (:mod:`.traffic`), a gateway's two hops and what an\n"
    "injection did to an exchange.\n\n"
    "Imports the vocabulary and the cases only (``tests/test_architecture.py``).",
    "recording": "The recording, and what else mcp-assay writes: the JSONL record format and its readers, captures\n"
    "read from files, redaction, logs, the edge audit, whether a capture met a peer, and a capture's notes.\n\n"
    "Imports the vocabulary, the cases and the wire only (``tests/test_architecture.py``).",
    "userinput": "What a user hands mcp-assay: one check per kind of value (URLs, ports, headers, commands), and the\n"
    "files named on the command line.\n\n"
    "The top room of the core (``tests/test_architecture.py``).",
}
"""The docstring of each new folder's ``__init__.py``."""

DOC_EDITS: tuple[tuple[str, str, str], ...] = (
    (
        "docs/architecture.md",
        r"the other way\): the \*\*core\*\* \(`wire`, .*?`values`\)",
        "the other way): the **core**, in rooms each importing only those before it: `vocabulary/`\n"
        "(the protocol's names, verdicts and replays, shell words, errors), `cases/`, `wire/` (JSON text,\n"
        "JSON-RPC, event streams, lines, the exchange model, the exchange log, a gateway's hops, injected\n"
        "faults), `recording/` (records and their readers, captures read from files, redaction, logs, the\n"
        "edge audit, presence, notes) and `userinput/` (the values and files a user hands mcp-assay)",
    ),
    ("docs/architecture.md", r"instead of one `wire/model\.py`", "instead of one `wire.py`"),
    ("docs/architecture.md", r"\(`faults\.FaultKind`", "(`wire.faults.FaultKind`"),
)
"""Prose the rules above cannot rewrite: (file, pattern, replacement), each applied where its pattern is found."""

ROOTS = ("src", "tests", "docs", "examples", ".ci")
TOP_FILES = ("README.md", "CONTRIBUTING.md", "pyproject.toml")
SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".ini", ".sh", ".json", ".mjs", ".js", ""}


def module_of(relative: str) -> str:
    """``wire/model.py`` -> ``mcp_assay.wire.model``."""
    return "mcp_assay." + relative.removesuffix(".py").replace("/", ".")


def git(*args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=check, capture_output=True, text=True).stdout


def move_files(dry_run: bool) -> list[str]:
    """``git mv`` every file not at its new place yet; a new folder gets its ``__init__.py``."""
    done = []
    for old, new in MOVES.items():
        source, target = PACKAGE / old, PACKAGE / new
        if not source.exists():
            if not target.exists():
                print(f"warning: neither {old} nor {new} exists", file=sys.stderr)
            continue
        if target.exists():
            raise SystemExit(f"both {old} and {new} exist: merge them by hand, then run again")
        done.append(f"{old} -> {new}")
        if dry_run:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        init = target.parent / "__init__.py"
        if not init.exists():
            room = target.parent.relative_to(PACKAGE).as_posix()
            init.write_text(f'"""{ROOM_DOCS.get(room, room)}\n"""\n', encoding="utf-8")
            git("add", str(init))
        git("mv", str(source), str(target))
    return done


def _final_names() -> dict[str, int]:
    """How many files of the package, as the moves leave it, carry each file name."""
    counts: dict[str, int] = {}
    moved_from = {PACKAGE / old for old in MOVES}
    names = [path.name for path in PACKAGE.rglob("*.py") if path not in moved_from]
    names += [Path(new).name for old, new in MOVES.items() if (PACKAGE / old).exists()]
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


Replacement = str | Callable[[re.Match[str]], str]

_IMPORTED = re.compile(r"\s+import\s+(\([^)]*\)|[^\n]*)")


def _unless_importing_from(package: str, inside: set[str], new: str) -> Callable[[re.Match[str]], str]:
    """The replacement of a module name that is now a folder's: ``from <folder> import <its modules>`` (what an
    earlier run wrote) is left as it is; any other use of the name means the module now inside the folder."""

    def replace(match: re.Match[str]) -> str:
        imported = _IMPORTED.match(match.string, match.end())
        if imported is not None:
            names = [part.split(" as ")[0].strip(" ()\n") for part in imported.group(1).split(",")]
            if names and all(name in inside for name in names if name):
                return match.group(0)
        return new

    return replace


def rules() -> list[tuple[re.Pattern[str], Replacement, str | None]]:
    """Every rewrite: (pattern, replacement, the folder it is limited to, ``!folder`` for all but one, or ``None``)."""
    found: list[tuple[re.Pattern[str], Replacement, str | None]] = []
    renamed = {module_of(old): module_of(new) for old, new in MOVES.items()}
    packages: dict[str, set[str]] = {}
    for new in MOVES.values():
        module = module_of(new)
        packages.setdefault(module.rpartition(".")[0], set()).add(module.rpartition(".")[2])
    for old, new in sorted(renamed.items(), key=lambda item: -len(item[0])):
        inside = packages.get(old)
        pattern = r"(?<![\w.])" + re.escape(old) + r"(?![\w])"
        if inside:  # the old module's name is now a folder's: leave a name already inside it alone
            pattern += r"(?!\.(?:" + "|".join(sorted(inside)) + r")(?![\w]))"
            found.append((re.compile(pattern), _unless_importing_from(old, inside, new), None))
        else:
            found.append((re.compile(pattern), new, None))
    counts = _final_names()
    for old, new in MOVES.items():
        path = re.compile(r"(?<![\w/.])((?:src/)?mcp_assay/)" + re.escape(old) + r"(?![\w])")
        found.append((path, r"\g<1>" + new, None))
        if "/" in old:
            found.append((re.compile(r"(?<![\w/.])" + re.escape(old) + r"(?![\w])"), new, None))
        elif counts.get(Path(old).name, 0) == int(Path(new).name == Path(old).name):  # no other file has the name
            # (outside tests/, whose helpers have files of their own with such names: tests/peers/gateway/faults.py)
            found.append((re.compile(r"(?<![\w/.])" + re.escape(old) + r"(?![\w])"), new, "!tests"))
        old_dir, _, old_base = old.removesuffix(".py").rpartition("/")
        new_dir, _, new_base = new.removesuffix(".py").rpartition("/")
        if old_dir and old_dir == new_dir and old_base != new_base:
            relative = re.compile(r"(?<=[`~ ])\." + re.escape(old_base) + r"(?=[`.])")
            found.append((relative, "." + new_base, f"src/mcp_assay/{old_dir}"))
    return found


def _moved_by_parent() -> dict[str, dict[str, tuple[str, str]]]:
    """For each package an old module was in: its old name -> (the package it is in now, its new name)."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for old, new in MOVES.items():
        old_parent, _, old_name = module_of(old).rpartition(".")
        new_parent, _, new_name = module_of(new).rpartition(".")
        found.setdefault(old_parent, {})[old_name] = (new_parent, new_name)
    return found


def _module_imports(text: str) -> str:
    """``from mcp_assay import __version__, jsontext`` -> ``from mcp_assay import __version__`` and
    ``from mcp_assay.wire import jsontext``; a module renamed keeps its old name as an alias
    (``from mcp_assay.demo import client_session as session``)."""
    moved = _moved_by_parent()

    def split(match: re.Match[str]) -> str:
        indent, parent = match.group(1), match.group(2)
        names = [part.strip() for part in match.group(3).split(",") if part.strip()]
        kept, lines = [], []
        for item in names:
            name, _, alias = (part.strip() for part in item.partition(" as "))
            if name not in moved[parent]:
                kept.append(item)
                continue
            new_parent, new_name = moved[parent][name]
            alias = alias or (name if new_name != name else "")
            lines.append(f"{indent}from {new_parent} import {new_name}" + (f" as {alias}" if alias else ""))
        if not lines:
            return match.group(0)
        return "\n".join(([f"{indent}from {parent} import {', '.join(kept)}"] if kept else []) + lines)

    parents = "|".join(re.escape(parent) for parent in sorted(moved, key=len, reverse=True))
    pattern = rf"^([ \t]*)from ({parents}) import ([\w ,]+)$"
    return re.sub(pattern, split, text, flags=re.MULTILINE)


def files() -> Iterable[Path]:
    listed = git("ls-files", "-z", "--", *ROOTS, *TOP_FILES).split("\0")
    listed += git("ls-files", "-z", "--others", "--exclude-standard", "--", *ROOTS).split("\0")
    for name in sorted(set(listed)):
        path = ROOT / name
        if not name or path.resolve() == SELF or not path.is_file() or path.is_symlink():
            continue
        if path.suffix not in SUFFIXES or ".egg-info" in name or path.stat().st_size > 2_000_000:
            continue
        yield path


def rewrite(dry_run: bool) -> list[str]:
    changed = []
    found = rules()
    for path in files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        relative = path.relative_to(ROOT).as_posix()
        new = _module_imports(text)
        for pattern, replacement, within in found:
            if within is not None and within.startswith("!") and relative.startswith(within[1:] + "/"):
                continue
            if within is not None and not within.startswith("!") and not relative.startswith(within + "/"):
                continue
            new = pattern.sub(replacement, new)
        for name, edit, replacement in DOC_EDITS:
            if name == relative:
                new = re.sub(edit, replacement.replace("\\", "\\\\"), new, flags=re.DOTALL)
        if new != text:
            changed.append(relative)
            if not dry_run:
                path.write_text(new, encoding="utf-8")
    return changed


def leftovers() -> list[str]:
    """Imports of an old module by its package that the rules above did not rewrite (to fix by hand): a
    parenthesized ``from mcp_assay import (...)`` naming one."""
    found = []
    for parent, names in _moved_by_parent().items():
        pattern = re.compile(rf"from {re.escape(parent)} import \(([^)]*)\)")
        for path in files():
            if path.suffix != ".py":
                continue
            for match in pattern.finditer(path.read_text(encoding="utf-8", errors="replace")):
                listed = {part.split(" as ")[0].strip() for part in match.group(1).split(",")}
                if listed & set(names):
                    found.append(f"{path.relative_to(ROOT)}: {match.group(0)[:80]}")
    return found


def tidy() -> None:
    """Imports sorted again under their new names, and the code formatted (long import lines wrapped)."""
    ruff = str(ROOT / ".venv" / "bin" / "ruff")
    subprocess.run([ruff, "check", "--fix", "--select", "I", "-q", "src", "tests"], cwd=ROOT, check=False)
    subprocess.run([ruff, "format", "-q", "src", "tests"], cwd=ROOT, check=True)


LINE_LENGTH = 120


def _string_lines(text: str) -> set[int]:
    """The numbers (1-based) of the lines inside a triple-quoted string, its last line excepted."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.string.lstrip("rbuRBU").startswith(('"""', "'''")):
                inside.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return set()
    return inside


def wrap_long_lines(paths: Iterable[Path]) -> list[str]:
    """Docstring lines a longer name pushed past the line length, broken at a space (the rest on a line of its own,
    indented as the line was); what cannot be broken so is named for a hand."""
    left = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        if not any(len(line) > LINE_LENGTH for line in lines):
            continue
        inside, out = _string_lines(text), []
        for number, line in enumerate(lines, start=1):
            while number in inside and len(line) > LINE_LENGTH:
                cut = line.rfind(" ", 0, LINE_LENGTH + 1)
                indent = len(line) - len(line.lstrip())
                if cut <= indent + len('"""'):
                    break
                head, line = line[:cut].rstrip(), " " * indent + line[cut + 1 :]
                out.append(head)
            if number in inside and len(line) > LINE_LENGTH:
                left.append(f"{path.relative_to(ROOT)}:{number}: longer than {LINE_LENGTH}")
            out.append(line)
        new = "\n".join(out)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return left


def verify() -> int:
    """ruff, mypy --strict and test collection: what the layout must leave green."""
    venv = ROOT / ".venv" / "bin"
    steps = [
        [str(venv / "ruff"), "check", "src", "tests"],
        [str(venv / "ruff"), "format", "--check", "src", "tests"],
        [str(venv / "mypy")],
        [str(venv / "python"), "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "tests"],
    ]
    for step in steps:
        result = subprocess.run(step, cwd=ROOT, capture_output=True, text=True)
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        print(f"$ {' '.join(Path(step[0]).name if i == 0 else part for i, part in enumerate(step))}\n{tail}")
        if result.returncode != 0:
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dry-run", action="store_true", help="say what would move and change; change nothing")
    parser.add_argument("--verify", action="store_true", help="then run ruff, mypy and test collection")
    options = parser.parse_args(argv)
    moved = move_files(options.dry_run)
    changed = rewrite(options.dry_run)
    print(f"{len(moved)} files moved, {len(changed)} files rewritten" + (" (dry run)" if options.dry_run else ""))
    for line in moved:
        print(f"  moved {line}")
    if options.dry_run:
        for name in changed:
            print(f"  would rewrite {name}")
        return 0
    wrap_long_lines(ROOT / name for name in changed if name.endswith(".py"))
    tidy()
    left = leftovers() + wrap_long_lines(ROOT / name for name in changed if name.endswith(".py"))
    for line in left:
        print(f"left for a hand: {line}", file=sys.stderr)
    if left:
        return 1
    return verify() if options.verify else 0


if __name__ == "__main__":
    sys.exit(main())
