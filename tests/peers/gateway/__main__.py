"""Command line of the test gateway (see the package docstring)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import uvicorn

from tests.peers.gateway.backends import HttpUpstream, StdioUpstream
from tests.peers.gateway.faults import FAULTS, Faults
from tests.peers.gateway.relay import Config, Gateway


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.peers.gateway", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--path", default="/mcp")
    upstream = parser.add_mutually_exclusive_group()
    upstream.add_argument("--upstream", help="the upstream server's Streamable HTTP URL")
    upstream.add_argument("--upstream-command", help="a stdio server command line to spawn (a bridge)")
    parser.add_argument("--prefix", default="", help="prefix every tool name (and strip it on the way up)")
    parser.add_argument("--fault", action="append", default=[], help="a seeded fault by name (repeatable)")
    parser.add_argument("--allow-origin", action="append", default=[], help="an Origin served besides loopback ones")
    parser.add_argument("--log", type=Path, help="JSON lines: each front id with the upstream id it became")
    parser.add_argument("--list-faults", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.list_faults:
        for fault in FAULTS.values():
            print(f"{fault.name:25} {fault.seen:22} {fault.summary}")
        return 0
    if not args.upstream and not args.upstream_command:
        print("one of --upstream URL or --upstream-command CMD is required", file=sys.stderr)
        return 2
    try:
        faults = Faults([name for value in args.fault for name in value.split(",") if name])
    except ValueError as problem:
        print(problem, file=sys.stderr)
        return 2
    backend = HttpUpstream(args.upstream) if args.upstream else StdioUpstream(shlex.split(args.upstream_command))
    config = Config(
        upstream=backend,
        faults=faults,
        prefix=args.prefix,
        path=args.path,
        allowed_origins=frozenset(args.allow_origin),
        log=args.log,
    )
    uvicorn.run(Gateway(config), host=args.host, port=args.port, log_level="warning", lifespan="on")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
