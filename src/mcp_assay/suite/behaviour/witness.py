"""Reading a witness: the user-named read that shows whether a write landed.

Three kinds: an MCP ``tools/call`` on the target itself (sent in the lane's era, so over stdio it
reaches the same server process as the write), an HTTP request (a test route, an admin API), or a
local command (``sqlite3 …``, ``cat store.json``). Each answer is reduced by the witness's
``extract`` path; the default is a fingerprint of ``structuredContent`` (else ``content``) for an
MCP read, a fingerprint of the body for HTTP, and the stripped output for a command.

Every read is recorded as an :class:`~mcp_assay.wire.model.Observation` of kind ``witness`` (the MCP
read's own exchange is in the log too), with the case it belongs to and when it was taken, so
the rules judge a run and its recording alike. A read that fails is recorded with an ``error``
and makes its case *not verified*; it is never taken as "unchanged".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from mcp_assay.cases import NO_FACTS, Facts
from mcp_assay.cases import behaviour as cases
from mcp_assay.suite.behaviour.config import Witness
from mcp_assay.suite.behaviour.extract import ExtractError, apply_extract, fingerprint, parse_extract
from mcp_assay.suite.behaviour.lanes import Lane, Unavailable, refusable
from mcp_assay.vocabulary.errors import CredentialsRefused, TransportFailure
from mcp_assay.wire.jsonrpc import MISSING
from mcp_assay.wire.model import Observation

__all__ = ["Read", "WitnessReader", "value_of_result"]

OUTPUT_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Read:
    """One witness read."""

    value: Any = None
    error: str | None = None
    time: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def value_of_result(result: Any) -> Any:
    """The default MCP witness value: ``structuredContent`` if present, else ``content``, without ``_meta``."""
    if not isinstance(result, dict):
        return result
    if "structuredContent" in result:
        return result["structuredContent"]
    return result.get("content")


class WitnessReader:
    """Takes witness reads in one lane and records each as an observation."""

    def __init__(self, lane: Lane, record: Callable[[Observation], None], new_id: Callable[[str], str]) -> None:
        self.lane = lane
        self.record = record
        self.new_id = new_id

    async def read(self, witness: Witness, *, case: str, read: str, step: Facts = NO_FACTS) -> Read:
        """Read ``witness`` for ``case`` (``read`` says which: before, after, first, second) at ``step`` of it."""
        exchange: str | None = None
        facts = self.lane.facts(replace(step, case=case, read=read, witness=witness.name))
        try:
            if witness.kind == "mcp":
                raw, exchange = await self._mcp(witness, facts)
                default: Callable[[Any], Any] = lambda value: fingerprint(value_of_result(value))  # noqa: E731
            elif witness.kind == "http":
                raw = await self._http(witness)
                default = fingerprint
            else:
                raw = await self._command(witness)
                default = str.strip
            value = apply_extract(parse_extract(witness.extract), raw) if witness.extract else default(raw)
            result = Read(value=value, time=time.time())
        except _Failed as exc:
            result = Read(error=str(exc), time=time.time())
        except ExtractError as exc:
            result = Read(error=f"extract {witness.extract!r}: {exc}", time=time.time())
        data: dict[str, Any] = {"case": case, "read": read, "witness": witness.name, "via": witness.kind}
        data.update((key, value) for key, value in facts.to_record().items() if key not in data)
        if result.ok:
            data["value"] = result.value
        else:
            data["error"] = result.error
        if exchange is not None:
            data["exchange"] = exchange
        self.record(Observation(id=self.new_id("o"), time=result.time, kind="witness", data=data))
        return result

    # -- the three kinds -------------------------------------------------------------------------
    async def _mcp(self, witness: Witness, facts: Facts) -> tuple[Any, str | None]:
        assert witness.tool is not None
        try:
            client = await self.lane.client(witness.principal)
            probe = self.lane.probe(
                cases.WITNESS_READ,
                f"witness {witness.name}: tools/call {witness.tool} ({facts.read})",
                replace(facts, principal=witness.principal),
            )
            reply = await client.request(
                "tools/call",
                {"name": witness.tool, "arguments": dict(witness.arguments)},
                probe=probe,
                timeout=witness.timeout_ms / 1000,
                **refusable(client),
            )
        except Unavailable as exc:
            raise _Failed(str(exc)) from None
        except CredentialsRefused as exc:
            raise _Failed(f"the witness principal was refused ({exc})") from None
        except TransportFailure as exc:
            raise _Failed(f"tools/call {witness.tool} failed: {exc}") from None
        if reply.result is MISSING:
            raise _Failed(f"tools/call {witness.tool} answered {reply.describe()}")
        result = reply.result
        if isinstance(result, dict) and result.get("isError") is True:
            raise _Failed(f"tools/call {witness.tool} answered with isError: true")
        return result, reply.exchange

    async def _http(self, witness: Witness) -> Any:
        assert witness.url is not None
        try:
            async with httpx.AsyncClient(timeout=witness.timeout_ms / 1000, follow_redirects=False) as client:
                response = await client.request(witness.method, witness.url, headers=list(witness.headers))
        except httpx.HTTPError as exc:
            raise _Failed(f"{witness.method} {witness.url} failed: {type(exc).__name__}") from None
        if not 200 <= response.status_code < 300:
            raise _Failed(f"{witness.method} {witness.url} answered HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            return response.text

    async def _command(self, witness: Witness) -> Any:
        try:
            process = await asyncio.create_subprocess_exec(
                *witness.argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
        except OSError as exc:
            raise _Failed(f"could not run {witness.argv[0]!r}: {exc.strerror or exc}") from None
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=witness.timeout_ms / 1000)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise _Failed(f"{witness.argv[0]} did not finish within {witness.timeout_ms} ms") from None
        if process.returncode != 0:
            tail = stderr.decode("utf-8", "replace").strip()[-200:]
            raise _Failed(f"{witness.argv[0]} exited with code {process.returncode}" + (f": {tail}" if tail else ""))
        text = stdout[:OUTPUT_LIMIT].decode("utf-8", "replace")
        if witness.extract is None:
            return text
        try:
            return json.loads(text)
        except ValueError:
            raise _Failed(f"{witness.argv[0]} printed no JSON for extract {witness.extract!r}") from None


class _Failed(Exception):
    """A witness read that produced no value."""
