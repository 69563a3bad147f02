"""The import graph keeps the intended shape: no cycle, and every arrow pointing inward.

Tool-defined. The core (the wire model, parsing, the exchange log, recordings, verdicts, the case
registry) knows
nothing of the rest; ``spec/`` (revisions, the catalogue, the rules and the engine) builds on the
core only; ``report/`` renders verdicts and builds on the core only; ``suite/`` and ``addon/``
produce traffic and build on all three; the command line and the test helpers sit on top. Only
``addon/`` imports mitmproxy. The test reads every import statement of the package, the ones
inside functions included, so a cycle cannot hide behind a late import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_assay

PACKAGE = Path(mcp_assay.__file__).parent

ROOMS: dict[str, tuple[str, ...]] = {
    "vocabulary": (
        "mcp_assay.vocabulary.protocol",
        "mcp_assay.vocabulary.verdicts",
        "mcp_assay.vocabulary.replays",
        "mcp_assay.vocabulary.shell",
        "mcp_assay.vocabulary.errors",
    ),
    "cases": ("mcp_assay.cases",),
    "wire": (
        "mcp_assay.wire.slots",
        "mcp_assay.wire.jsontext",
        "mcp_assay.wire.jsonrpc",
        "mcp_assay.wire.sse",
        "mcp_assay.wire.lines",
        "mcp_assay.wire.model",
        "mcp_assay.wire.traffic",
        "mcp_assay.wire.hops",
        "mcp_assay.wire.faults",
    ),
    "recording": (
        "mcp_assay.recording.records",
        "mcp_assay.recording.readers",
        "mcp_assay.recording.typed",
        "mcp_assay.recording.redaction",
        "mcp_assay.recording.inputs",
        "mcp_assay.recording.presence",
        "mcp_assay.recording.audit",
        "mcp_assay.recording.notes",
        "mcp_assay.recording.logs",
    ),
    "userinput": (
        "mcp_assay.userinput.values",
        "mcp_assay.userinput.files",
    ),
}
"""The core's rooms, each importing only those before it (and itself): the words every part shares (the
protocol's names, verdicts, errors), the probe cases, the wire model and its readers, the recording (and what
mcp-assay writes: redaction, logs, notes), and what a user hands mcp-assay (values, files)."""
CORE = {name for names in ROOMS.values() for name in names}
TOP_LEVEL = {"mcp_assay", "mcp_assay.__main__", "mcp_assay.testing", "mcp_assay.pytest_plugin"}
"""The modules that may stay loose at the package top: the package, ``python -m``, and the public test helpers."""
EDGE_MODULES = {"mcp_assay.__main__", "mcp_assay.testing", "mcp_assay.pytest_plugin", "mcp_assay.demo"}
ALLOWED = {
    "core": {"core"},
    "spec": {"core", "spec"},
    "report": {"core", "report"},
    "suite": {"core", "spec", "report", "suite"},
    "addon": {"core", "spec", "report", "suite", "addon"},
    "edge": {"core", "spec", "report", "suite", "addon", "edge"},
}


def room(module: str) -> str | None:
    """The core room of ``module`` (a listed module, anything inside one, or a package holding only one room's)."""
    found = {
        name
        for name, members in ROOMS.items()
        for member in members
        if module == member or module.startswith(member + ".") or member.startswith(module + ".")
    }
    if module == "mcp_assay" or len(found) != 1:
        return None
    return found.pop()


def layer(module: str) -> str:
    if module == "mcp_assay" or room(module) is not None:
        return "core"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("spec", "report", "suite", "addon"):
        return parts[1]
    if module in EDGE_MODULES or (len(parts) > 1 and parts[1] in ("cli", "demo", "scale")):
        return "edge"
    raise AssertionError(f"{module} belongs to no layer: add it to tests/test_architecture.py")


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """Every mcp_assay module ``module`` imports (at any depth of the file), with the line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if candidate in known else base), node.lineno


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    edges: dict[str, set[str]] = {name: set() for name in found}
    for name, path in found.items():
        for target, _ in imports_of(name, path, known):
            if target in known and target != name:
                edges[name].add(target)
    return edges


def test_every_module_belongs_to_a_layer() -> None:
    for name in modules():
        layer(name)


def test_no_import_points_against_the_layers() -> None:
    found = modules()
    known = set(found)
    wrong = []
    for name, path in found.items():
        for target, line in imports_of(name, path, known):
            if target in known and layer(target) not in ALLOWED[layer(name)]:
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line} ({layer(name)}) imports {target} ({layer(target)})"
                )
    assert not wrong, "imports against the intended direction:\n" + "\n".join(wrong)


def test_the_core_rooms_import_only_those_before_them() -> None:
    """Tool-defined: inside the core, the vocabulary knows nothing of the wire, the wire nothing of recordings."""
    order = list(ROOMS)
    found = modules()
    known = set(found)
    wrong = []
    for name, path in found.items():
        here = room(name)
        for target, line in imports_of(name, path, known):
            there = room(target) if target in known else None
            if here is not None and there is not None and order.index(there) > order.index(here):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({here}) imports {target} ({there})")
    assert not wrong, "core imports against the rooms' order:\n" + "\n".join(wrong)


def test_no_module_is_loose_at_the_package_top_unless_a_room_lists_it() -> None:
    """Tool-defined: a new core module goes into its room's folder (and its room's list), not the package top."""
    loose = {name for name in modules() if name.count(".") == 1 and not (PACKAGE / name.split(".")[1]).is_dir()}
    assert loose <= TOP_LEVEL | CORE, sorted(loose - TOP_LEVEL - CORE)


def test_only_the_addon_imports_mitmproxy() -> None:
    found = modules()
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for name, path in found.items()
        if layer(name) != "addon"
        for target, line in imports_of(name, path, set(found))
        if target == "mitmproxy" or target.startswith("mitmproxy.")
    ]
    assert not wrong, f"mitmproxy imported outside addon/: {wrong}"


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def test_the_import_graph_has_no_cycle() -> None:
    cycles = find_cycles(graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The test above can fail: a cycle hidden two modules deep is found."""
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_a_core_module_may_not_import_the_engine() -> None:
    """The layer table forbids what the issue found: the core importing ``spec`` (the old ``checks.py``)."""
    assert layer("mcp_assay.wire.model") == "core"
    assert layer("mcp_assay.spec.engine") not in ALLOWED[layer("mcp_assay.wire.model")]
    assert layer("mcp_assay.spec.rules.auth.tokens") not in ALLOWED[layer("mcp_assay.report.model")]


def test_the_command_line_imports_mitmproxy_only_for_the_proxy() -> None:
    """Tool-defined: every command parses its options from one tree; importing mitmproxy there made every
    ``mcp-assay run`` pay about 0.7 s of CPU for a proxy it never starts. Every command is imported here (the
    group imports one only when it is named), so none of them may import mitmproxy either."""
    every_command = "import sys; from mcp_assay.cli import cli; [cli.commands[name] for name in cli.commands]"
    loaded = subprocess.run(
        [sys.executable, "-c", every_command + "; print(sorted({n.split('.')[0] for n in sys.modules}))"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert "'mitmproxy'" not in loaded.stdout
