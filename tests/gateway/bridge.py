"""A minimal HTTP-to-stdio MCP bridge for the tests: a gateway that spawns a stdio server (not a product).

Each POST's JSON-RPC message is written to the server's stdin as one line; for a request, the lines the
server writes until the answer with its id are sent back as one event stream (notifications first), for a
notification ``202``. Ids are passed through unchanged, as the simplest bridges do. The server command can be
wrapped in ``mcp-assay tap --hop back`` to watch the back hop.

usage: python bridge.py PORT -- COMMAND...
"""

from __future__ import annotations

import asyncio
import json
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route


def app(command: list[str]) -> Starlette:
    state: dict[str, object] = {}
    waiting: dict[object, asyncio.Queue[bytes]] = {}

    async def server() -> asyncio.subprocess.Process:
        process = state.get("process")
        if process is None:
            process = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
            )
            state["process"] = process
            state["reader"] = asyncio.create_task(read(process))
        assert isinstance(process, asyncio.subprocess.Process)
        return process

    async def read(process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while line := await process.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            ident = message.get("id") if isinstance(message, dict) else None
            queues = [waiting[ident]] if ident in waiting and "method" not in message else list(waiting.values())
            for queue in queues[:1]:
                await queue.put(line)

    async def post(request: Request) -> Response:
        body = await request.body()
        process = await server()
        assert process.stdin is not None
        message = json.loads(body)
        ident = message.get("id") if "method" in message else None
        if ident is None:
            process.stdin.write(body.strip() + b"\n")
            await process.stdin.drain()
            return Response(status_code=202)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        waiting[ident] = queue
        process.stdin.write(body.strip() + b"\n")
        await process.stdin.drain()

        async def events():  # type: ignore[no-untyped-def]
            try:
                while True:
                    line = await queue.get()
                    yield b"event: message\ndata: " + line.strip() + b"\n\n"
                    answer = json.loads(line)
                    if answer.get("id") == ident and "method" not in answer:
                        return
            finally:
                waiting.pop(ident, None)

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/mcp", post, methods=["POST"])])


def main(argv: list[str]) -> None:
    port = int(argv[1])
    command = argv[argv.index("--") + 1 :]
    uvicorn.run(app(command), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
