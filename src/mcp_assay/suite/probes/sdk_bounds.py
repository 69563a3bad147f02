"""The SDK cross-check under the suite's own limits: what its HTTP client reads, and what stopped it.

The official SDK's client reads a JSON answer whole before it parses it. Left to itself, a server
that answers ``tools/list`` with half a gigabyte gets half a gigabyte read into memory, where the
suite's own clients stop at :data:`~mcp_assay.suite.transports.http.ANSWER_LIMIT`. So the SDK gets
an ``httpx2`` client whose transport enforces that limit while the body streams in (the decoded
bytes: it asks for ``identity`` and refuses an encoding it was not offered), and which notes every
answer it cut and every transport failure in :class:`Stops`. A case the SDK could not finish after
one of those is *not verified* with that reason, whatever the SDK made of the broken read.

The SDK's own JSON parser has limits of its own (nesting depth, digits in a number) where JSON has
none; :func:`parser_limit` recognises its words for them, so that an answer the SDK could not parse
for that reason is not blamed on the server either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2

from mcp_assay.suite.transports.http import ANSWER_LIMIT

__all__ = ["PARSER_LIMITS", "AnswerCut", "BoundedTransport", "Stops", "bounded_client", "parser_limit"]

PARSER_LIMITS = (
    "recursion limit exceeded",
    "number out of range",
    "maximum recursion depth",
    "integer string conversion",
)
"""What the SDK's parser (jiter, through pydantic) or Python says when an answer passes one of its limits."""


def parser_limit(text: str) -> str | None:
    """The parser limit ``text`` names, if it names one."""
    return next((limit for limit in PARSER_LIMITS if limit in text), None)


@dataclass
class Stops:
    """Why the bounded client stopped reading answers, in order (POSTs only: the answers a case waits for)."""

    items: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.items.append(text)

    def since(self, mark: int) -> str | None:
        """The first stop recorded after ``mark`` (a length of :attr:`items` taken earlier)."""
        return self.items[mark] if len(self.items) > mark else None


class AnswerCut(httpx2.StreamError):
    """The bounded client stopped reading an answer.

    A stream error, which the SDK turns into an error answer to the one request it was reading (a
    transport error would end its whole connection, and the cases still waiting on it)."""


class _Capped(httpx2.AsyncByteStream):
    """An answer's body, read up to ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, where: str, stops: Stops | None) -> None:
        self._inner = inner
        self._limit = limit
        self._where = where
        self._stops = stops

    def _stop(self, text: str) -> AnswerCut:
        if self._stops is not None:
            self._stops.add(text)
        return AnswerCut(text)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        try:
            async for chunk in self._inner:
                read += len(chunk)
                if read > self._limit:
                    raise self._stop(
                        f"{self._where}: the answer passed the {self._limit}-byte limit the run reads of one answer, "
                        "so the SDK client was not let read the rest"
                    )
                yield chunk
        except AnswerCut:
            raise
        except httpx2.TransportError as exc:
            raise self._stop(f"{self._where}: reading the answer failed ({type(exc).__name__}: {exc})") from exc

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Refused(httpx2.AsyncByteStream):
    """An answer the bounded client does not read at all."""

    def __init__(self, inner: httpx2.AsyncByteStream, error: AnswerCut) -> None:
        self._inner = inner
        self._error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise self._error
        yield b""  # pragma: no cover - makes this an async generator

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that reads at most ``limit`` bytes of one answer and notes why it stopped."""

    def __init__(self, stops: Stops, limit: int | None = None) -> None:
        self.stops = stops
        self.limit = ANSWER_LIMIT if limit is None else limit
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"
        noted = self.stops if request.method == "POST" else None
        where = f"{request.method} {request.url.copy_with(query=None)}"
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if noted is not None:
                noted.add(f"{where}: {type(exc).__name__}: {exc}".rstrip(": "))
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            text = f"{where}: the answer came with content-encoding {encoding}, though only identity was accepted"
            if noted is not None:
                noted.add(text)
            response.stream = _Refused(response.stream, AnswerCut(text))
        else:
            response.stream = _Capped(response.stream, self.limit, where, noted)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def bounded_client(
    stops: Stops, *, timeout: float, headers: dict[str, str] | None = None, limit: int | None = None
) -> httpx2.AsyncClient:
    """An ``httpx2`` client for the SDK: the run's timeout and answer limit (no proxy from the environment: a proxy
    mount would take requests past the bounded transport)."""
    return httpx2.AsyncClient(
        transport=BoundedTransport(stops, limit), headers=headers, timeout=timeout, trust_env=False
    )
