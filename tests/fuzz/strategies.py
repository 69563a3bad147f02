"""Hypothesis strategies for the hostile server: valid answers in the schema's shapes, and ways to break them.

The valid values follow the 2026-07-28 result shapes (a DiscoverResult, a ListToolsResult ...;
``tests/fuzz/test_strategies.py`` checks them against the schema) and are then broken by
:class:`~tests.peers.hostile.Break` values: a member of the wrong JSON type, a member missing, a
huge or deeply nested value, another id. :func:`scripts` draws whole scripts: how many requests are
answered faithfully first, then which answers are broken how (framing, status, floods, cut or
mislabelled bodies, silence).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.peers.hostile import Behaviour, Break, Script

__all__ = ["SHAPES", "breaks", "json_values", "results", "scripts"]

SERVER_META = {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "0.0.1"}}
VERSIONS = ("2026-07-28", "2025-11-25", "2024-11-05", "1999-01-01")

names = st.sampled_from(["echo", "now", "twin", "a.b", "x-1"]) | st.text(
    alphabet=st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=12
)
"""Names that often collide (two tools named alike) or match the arguments the run is given."""
texts = st.text(max_size=40)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(texts, children, max_size=3),
    max_leaves=8,
)
"""Any JSON value, small."""


def _complete(result: dict[str, Any], *, cache: bool = False) -> dict[str, Any]:
    hints = {"ttlMs": 0, "cacheScope": "private"} if cache else {}
    return {"resultType": "complete", **result, **hints, "_meta": dict(SERVER_META)}


tools = st.builds(
    lambda name, description, properties, required, read_only: {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {key: {"type": "string"} for key in properties},
            **({"required": [key for key in properties if key in required]} if required else {}),
        },
        "annotations": {"readOnlyHint": read_only},
    },
    names,
    texts,
    st.lists(names, max_size=3, unique=True),
    st.lists(names, max_size=2),
    st.booleans(),
)
SHAPES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "DiscoverResult": st.builds(
        lambda versions, ttl, scope, caps: _complete(
            {"supportedVersions": versions, "capabilities": caps, "ttlMs": ttl, "cacheScope": scope}
        ),
        st.lists(st.sampled_from(VERSIONS), max_size=3, unique=True),
        st.integers(min_value=0, max_value=60_000),
        st.sampled_from(["public", "private"]),
        st.fixed_dictionaries({}, optional={"tools": st.just({}), "prompts": st.just({}), "resources": st.just({})}),
    ),
    "ListToolsResult": st.builds(lambda items: _complete({"tools": items}, cache=True), st.lists(tools, max_size=4)),
    "ListPromptsResult": st.builds(
        lambda items: _complete({"prompts": [{"name": name} for name in items]}, cache=True),
        st.lists(names, max_size=3),
    ),
    "ListResourcesResult": st.builds(
        lambda items: _complete(
            {"resources": [{"uri": f"file:///{name}", "name": name} for name in items]}, cache=True
        ),
        st.lists(names, max_size=3),
    ),
    "CallToolResult": st.builds(
        lambda text, error: _complete({"content": [{"type": "text", "text": text}], "isError": error}),
        texts,
        st.booleans(),
    ),
    "InitializeResult": st.builds(
        lambda version: {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0.0.1"},
        },
        st.sampled_from(VERSIONS),
    ),
}
"""Valid results of the schema's main shapes, drawn."""

results = st.one_of(*SHAPES.values())

METHODS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "prompts/list": "ListPromptsResult",
    "resources/list": "ListResourcesResult",
    "tools/call": "CallToolResult",
    "initialize": "InitializeResult",
}
answers = st.lists(st.sampled_from(sorted(METHODS)), max_size=3, unique=True).flatmap(
    lambda methods: st.tuples(*(st.tuples(st.just(method), SHAPES[METHODS[method]]) for method in methods))
)
"""Drawn results that replace the faithful result of some methods, for the whole run."""

breaks: st.SearchStrategy[Break] = st.one_of(
    st.builds(Break, st.just("retype"), st.integers(0, 8), json_values),
    st.builds(Break, st.just("drop"), st.integers(0, 8)),
    st.builds(Break, st.just("huge"), st.integers(0, 8), st.sampled_from([5_000, 300_000, 1_500_000])),
    st.builds(Break, st.just("deep"), st.integers(0, 8), st.sampled_from([40, 900, 1_200, 5_000])),
    st.builds(
        Break,
        st.just("id"),
        st.just(0),
        st.sampled_from(["string", "float", "null", "missing", "bool", "other", "object", "digits"]),
    ),
    st.builds(Break, st.just("result"), st.just(0), results),
)

behaviours: st.SearchStrategy[Behaviour] = st.builds(
    Behaviour,
    breaks=st.lists(breaks, max_size=2).map(tuple),
    status=st.one_of(st.none(), st.none(), st.sampled_from([200, 202, 400, 404, 500])),
    framing=st.sampled_from(["faithful", "faithful", "faithful", "json", "sse", "empty", "text"]),
    flood=st.sampled_from([0, 0, 0, 3, 800]),
    cut=st.one_of(st.none(), st.none(), st.none(), st.floats(min_value=0.05, max_value=0.95)),
    lie_length=st.sampled_from([False, False, False, False, True]),
    silent=st.sampled_from([False] * 12 + [True]),
)

scripts: st.SearchStrategy[Script] = st.builds(
    Script,
    faithful_first=st.sampled_from([0, 0, 0, 1, 2, 5, 12, 40]),
    plan=st.lists(behaviours, min_size=1, max_size=3).map(tuple),
    answers=answers,
)
