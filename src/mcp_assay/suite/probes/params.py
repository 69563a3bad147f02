"""``Mcp-Param-*`` headers (2026-07-28 HTTP): tool arguments mirrored into headers, and how a server checks them.

A tool may mark properties of its ``inputSchema`` with ``x-mcp-header: <Name>``; a client then
mirrors each such argument into ``Mcp-Param-<Name>``, and the server must reject a call whose
header is missing or disagrees with the body (``400`` and ``-32020``), decode the Base64 sentinel
form before comparing, refuse raw non-ASCII in the value, compare integers numerically (``42.0``
matches ``42``, a SHOULD) and never demand the header when the argument is null or absent.

These cases call a real tool, so they follow the suite's rule for calls with arguments: the tool
must be named in ``--tool-args`` and listed with valid ``x-mcp-header`` marks, and its arguments
are used as given (only the headers change; the absent case leaves out an optional marked
argument). The cases that vary a header need the marked argument to have a value in those
arguments. Whatever cannot run is reported as not verified with the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mcp_assay.cases import Case
from mcp_assay.cases import params as cases
from mcp_assay.spec.rules.shared.header_mirroring import HeaderMark, header_marks, mirror
from mcp_assay.suite.context import SuiteContext
from mcp_assay.suite.era_clients import ModernClient, encode_header_value
from mcp_assay.suite.probes._lists import allowed_arguments, walk
from mcp_assay.vocabulary.protocol import Header

__all__ = ["REQUIREMENTS", "run"]

REQUIREMENTS = frozenset().union(*(case.feeds for case in cases.CASES))
"""What these cases feed; HTTP-16 and HTTP-17 are also fed by the ``Mcp-Name`` cases."""
PARAM_ONLY = cases.PARAM_MISSING.feeds | cases.PARAM_ABSENT.feeds | cases.PARAM_NUMERIC.feeds


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return None
        node = node[step]
    return node


def _schema_at(schema: Any, path: tuple[str, ...]) -> Any:
    node = schema
    for step in path:
        properties = node.get("properties") if isinstance(node, dict) else None
        node = properties.get(step) if isinstance(properties, dict) else None
    return node


def _required(schema: Any, path: tuple[str, ...]) -> bool:
    parent = _schema_at(schema, path[:-1])
    required = parent.get("required") if isinstance(parent, dict) else None
    return isinstance(required, list) and path[-1] in required


def _nullable(mark: HeaderMark) -> bool:
    declared = mark.schema.get("type")
    return isinstance(declared, list) and "null" in declared


def _without(arguments: Mapping[str, Any], path: tuple[str, ...], *, null: bool) -> dict[str, Any]:
    """A deep copy of ``arguments`` with the value at ``path`` removed (or set to null)."""
    copied: dict[str, Any] = copy.deepcopy(dict(arguments))
    node: Any = copied
    for step in path[:-1]:
        node = node.setdefault(step, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict):
        if null:
            node[path[-1]] = None
        else:
            node.pop(path[-1], None)
    return copied


def _other(value: Any) -> Any:
    """A value of the same type that differs from ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return f"{value}-other" if value else "mcp-assay-other"


async def _tools(ctx: SuiteContext, client: ModernClient) -> list[dict[str, Any]] | None:
    listing = ctx.listings.get("tools/list")
    if listing is None:
        listing = await walk(ctx, "tools/list", cases.LIST_FOR_PARAM_HEADERS)
        ctx.listings["tools/list"] = listing
    if not listing.ok:
        return None
    if not client.tools:
        client.tools = {tool["name"]: tool for tool in listing.items if isinstance(tool.get("name"), str)}
    return listing.items


def _target(
    ctx: SuiteContext, tools: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[HeaderMark], dict[str, Any]] | str:
    """The tool to probe, its marks and the arguments to call it with; or why there is none."""
    marked = []
    for tool in tools:
        marks, problems = header_marks(tool)
        if marks and not problems and isinstance(tool.get("name"), str):
            marked.append((tool, marks))
    if not marked:
        return "no listed tool marks a parameter with x-mcp-header, so no call carries Mcp-Param headers"
    allowed = allowed_arguments(ctx, tools)
    for tool, marks in marked:
        arguments = allowed.get(tool["name"])
        if arguments is not None:
            return tool, marks, dict(arguments)
    names = ", ".join(sorted(tool["name"] for tool, _ in marked))
    return (
        f"{names} mark parameters with x-mcp-header, but the suite calls a tool only with the arguments "
        "--tool-args gives it or --generate-args allows; name one of them there to probe its Mcp-Param headers"
    )


async def run(ctx: SuiteContext) -> None:
    """Send the ``Mcp-Param-*`` cases for the first callable tool with ``x-mcp-header`` marks."""
    client = ctx.client
    assert isinstance(client, ModernClient)
    if not ctx.advertises("tools"):
        ctx.skip("the server advertises no tools capability", requirements=PARAM_ONLY, case=cases.PARAM_MISSING)
        return
    tools = await _tools(ctx, client)
    if tools is None:
        ctx.skip(
            "tools/list gave no listing to find x-mcp-header marks in",
            requirements=PARAM_ONLY,
            case=cases.PARAM_MISSING,
        )
        return
    target = _target(ctx, tools)
    if isinstance(target, str):
        ctx.skip(target, requirements=PARAM_ONLY, case=cases.PARAM_MISSING)
        return
    tool, marks, arguments = target
    name = tool["name"]
    schema = tool.get("inputSchema")
    present = [(mark, _value_at(arguments, mark.path)) for mark in marks]
    present = [(mark, value) for mark, value in present if value is not None and mirror(value) is not None]

    async def call(args: Mapping[str, Any], case: Case, intent: str, headers: Mapping[str, Any]) -> None:
        await client.request(
            "tools/call",
            {"name": name, "arguments": dict(args)},
            headers=dict(headers),
            probe=ctx.probe(case, f"tools/call {name}: {intent}"),
        )

    if present:
        mark, value = present[0]
        header = f"{Header.PARAM_PREFIX}{mark.name}"
        text = mirror(value)
        other = mirror(_other(value))
        assert text is not None and other is not None
        where = "arguments." + ".".join(mark.path)
        await call(
            arguments,
            cases.PARAM_MISSING,
            f"{header} left out although {where} is set: 400 and -32020",
            {header: None},
        )
        await call(
            arguments,
            cases.PARAM_MISMATCH,
            f"{header} {other!r} while {where} is {text!r}: 400 and -32020",
            {header: encode_header_value(other)},
        )
        await call(
            arguments,
            cases.PARAM_INVALID_CHARACTERS,
            f"{header} carrying raw non-ASCII bytes: 400",
            {header: (text + "-\u00e9").encode("utf-8")},
        )
        await call(
            arguments,
            cases.PARAM_BASE64,
            f"{header} as a =?base64?…?= sentinel of {text!r}: accepted",
            {header: encode_header_value(text, force=True)},
        )
        await call(
            arguments,
            cases.PARAM_BASE64_MISMATCH,
            f"{header} as a sentinel decoding to {other!r}: 400 and -32020",
            {header: encode_header_value(other, force=True)},
        )
    else:
        ctx.skip(
            f"--tool-args gives {name} no value for any of its marked properties "
            f"({', '.join('.'.join(mark.path) for mark in marks)}), so no Mcp-Param header could be varied",
            requirements=cases.PARAM_MISMATCH.feeds | cases.PARAM_NUMERIC.feeds,
            case=cases.PARAM_MISSING,
        )
    integers = [(mark, value) for mark, value in present if isinstance(value, int) and not isinstance(value, bool)]
    if integers:
        mark, value = integers[0]
        header = f"{Header.PARAM_PREFIX}{mark.name}"
        intent = f"{header} {value}.0 for the integer {value}: accepted (compared as numbers)"
        await call(arguments, cases.PARAM_NUMERIC, intent, {header: f"{value}.0"})
    elif present:
        ctx.skip(
            f"{name} has no integer marked property with a value in --tool-args",
            requirements=cases.PARAM_NUMERIC.feeds,
            case=cases.PARAM_NUMERIC,
        )
    await _absent(ctx, call, schema, marks, arguments, name)


async def _absent(
    ctx: SuiteContext, call: Any, schema: Any, marks: list[HeaderMark], arguments: dict[str, Any], name: str
) -> None:
    """HTTP-20: a call leaving a marked argument out (or null) must not be refused for lacking its header."""
    for mark in marks:
        header = f"{Header.PARAM_PREFIX}{mark.name}"
        where = "arguments." + ".".join(mark.path)
        if not _required(schema, mark.path):
            await call(
                _without(arguments, mark.path, null=False),
                cases.PARAM_ABSENT,
                f"{where} left out, so {header} is omitted: served, not -32020",
                {},
            )
            return
        if _nullable(mark):
            await call(
                _without(arguments, mark.path, null=True),
                cases.PARAM_NULL,
                f"{where} is null, so {header} is omitted: not -32020",
                {},
            )
            return
    ctx.skip(
        f"every marked property of {name} is required and not nullable, so no valid call leaves one out",
        requirements=cases.PARAM_ABSENT.feeds,
        case=cases.PARAM_ABSENT,
    )
