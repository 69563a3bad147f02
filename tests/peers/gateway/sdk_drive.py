"""Drive the official Python SDK client (mcp 2.3.0) through a gateway, as an application would.

One client per run, in the mode given (``auto``, ``legacy`` or ``2026-07-28``), against a URL; each step
prints one JSON line ``{"step", "ok", "detail"}`` and a failed step does not stop the next. The steps are
what a relay must carry: every page of ``tools/list`` and ``resources/list``, a call with structured
content, progress during a call, log messages during a call, a call abandoned by timeout whose write
must not land, a text and a binary resource, and (2026-07-28) a ``subscriptions/listen`` event. The
upstream is ``witness_server.py`` (directly or on stdio behind a bridge); ``--prefix`` names the tools
as a prefixing gateway shows them.

usage: python -m tests.peers.gateway.sdk_drive URL MODE[:STEPS][,MODE[:STEPS]...] [--prefix P]
                                                [--upstream witness|sdk] [--steps all|smoke]
       (STEPS: all, smoke, or step names joined by +, e.g. auto:all,legacy:smoke)
       python -m tests.peers.gateway.sdk_drive stdio MODE[,MODE...] --command 'CMD ...' [--upstream ...]
(``--upstream sdk``: the server behind is ``sdk_server.py``, which has no witness tool, no blob and no pages)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import sys
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

BLOB = base64.b64encode(bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x80, 0xC3, 0x28]))


MODE: list[str] = ["auto"]
LISTEN_BOUND_S = 4.0
SMOKE = ("tools/list pages", "tools/call structured", "tools/call progress")
"""The steps ``--steps smoke`` runs (after connecting): what every relay must carry, quickly."""


def say(step: str, ok: bool, detail: Any = "") -> None:
    print(json.dumps({"mode": MODE[0], "step": step, "ok": ok, "detail": str(detail)[:300]}), flush=True)


async def step(name: str, work: Callable[[], Awaitable[tuple[bool, Any]]]) -> None:
    try:
        ok, detail = await work()
    except Exception as failure:  # noqa: BLE001 - every failure is a step's outcome
        ok, detail = False, f"{type(failure).__name__}: {failure}"
    say(name, ok, detail)


async def drive(
    target: str | StdioServerParameters, mode: str, prefix: str, witness: bool, chosen: set[str] | None
) -> None:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "gateway"})

    warnings.simplefilter("ignore")
    async with Client(
        target, mode=mode, logging_callback=on_log, log_level="info", cache=None, elicitation_callback=on_elicit
    ) as client:  # type: ignore[arg-type]
        say("connect", True, client.protocol_version)

        async def all_tools() -> tuple[bool, Any]:
            names: list[str] = []
            cursor = None
            for _ in range(20):
                page = await client.list_tools(cursor=cursor)
                names += [tool.name for tool in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            return f"{prefix}add" in names and (not witness or f"{prefix}witness" in names), names

        async def add() -> tuple[bool, Any]:
            result = await client.call_tool(f"{prefix}add", {"a": 40, "b": 2})
            return result.structured_content == {"result": 42}, result.structured_content

        async def progress() -> tuple[bool, Any]:
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            result = await client.call_tool(f"{prefix}progress_tool", {"steps": 3}, progress_callback=on_progress)
            return seen == [1.0, 2.0, 3.0] and not result.is_error, seen

        async def logged() -> tuple[bool, Any]:
            before = len(logs)
            await client.call_tool(f"{prefix}chatty", {})
            with anyio.move_on_after(2):
                while len(logs) < before + 2:
                    await anyio.sleep(0.02)
            return len(logs) >= before + 2, logs[before:]

        async def cancelled() -> tuple[bool, Any]:
            tag = f"sdk-{uuid.uuid4().hex[:8]}"
            try:
                await client.call_tool(f"{prefix}slow_write", {"tag": tag, "delay_ms": 700}, read_timeout_seconds=0.2)
                return False, "the call returned before its timeout"
            except Exception:  # noqa: BLE001 - the timeout is the point
                pass
            await anyio.sleep(1.2)
            written = (await client.call_tool(f"{prefix}get_writes", {})).structured_content
            landed = tag in (written or {}).get("result", [])
            return not landed, f"write landed: {landed}"

        async def elicited() -> tuple[bool, Any]:
            if not witness or client.protocol_version == "2026-07-28":
                return True, "a 2025-11-25 server request (ctx.elicit), with the witness server"
            result = await client.call_tool(f"{prefix}ask", {})
            text = getattr(result.content[0], "text", "") if result.content else ""
            return text == "hello gateway", text

        async def resources() -> tuple[bool, Any]:
            uris: list[str] = []
            cursor = None
            for _ in range(20):
                page = await client.list_resources(cursor=cursor)
                uris += [str(resource.uri) for resource in page.resources]
                cursor = page.next_cursor
                if not cursor:
                    break
            text = (await client.read_resource("greeting://gateway")).contents[0]
            ok = "info://static" in uris and getattr(text, "text", None) == "Hello, gateway!"
            if witness:
                blob = (await client.read_resource("blob://raw")).contents[0]
                ok = ok and "blob://raw" in uris and getattr(blob, "blob", None) == BLOB.decode()
            return ok, uris

        async def listen() -> tuple[bool, Any]:
            if client.protocol_version != "2026-07-28":
                return True, "not offered before 2026-07-28"
            with anyio.fail_after(LISTEN_BOUND_S):
                async with client.listen(tools_list_changed=True) as subscription:
                    await client.call_tool(f"{prefix}touch_tools", {})
                    async for event in subscription:
                        return True, type(event).__name__
            return False, "the stream ended without an event"

        for name, work in [
            ("tools/list pages", all_tools),
            ("tools/call structured", add),
            ("tools/call progress", progress),
            ("tools/call logs", logged),
            ("tools/call cancelled", cancelled),
            ("tools/call elicitation", elicited),
            ("resources", resources),
            ("subscriptions/listen", listen),
        ]:
            if chosen is None or name in chosen:
                await step(name, work)


def _innermost(failure: BaseException) -> str:
    while isinstance(failure, BaseExceptionGroup) and failure.exceptions:
        failure = failure.exceptions[0]
    return f"{type(failure).__name__}: {failure}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url", help="the front's URL, or 'stdio' with --command")
    parser.add_argument(
        "modes",
        help="auto, legacy, 2026-07-28, or several joined by commas, each with :all, :smoke or :STEP+STEP (the steps"
        " it runs; default --steps)",
    )
    parser.add_argument("--prefix", default="")
    parser.add_argument("--upstream", choices=["witness", "sdk"], default="witness")
    parser.add_argument("--command", help="a stdio front (an HTTP-to-stdio bridge): its command line")
    parser.add_argument("--steps", choices=["all", "smoke"], default="all")
    args = parser.parse_args(argv)
    target: str | StdioServerParameters = args.url
    if args.url == "stdio":
        command = shlex.split(args.command or "")
        target = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    for spec in args.modes.split(","):
        mode, _, steps = spec.partition(":")
        MODE[0] = mode
        chosen = set(SMOKE) if (steps or args.steps) == "smoke" else None
        if steps not in ("", "all", "smoke"):
            chosen = set(steps.split("+"))
        try:
            anyio.run(drive, target, mode, args.prefix, args.upstream == "witness", chosen)
        except Exception as failure:  # noqa: BLE001 - a connect that fails is a step too
            say("connect", False, _innermost(failure))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
