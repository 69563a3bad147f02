"""A Streamable HTTP gateway of the project's own, faithful by default, with seeded relay faults.

Its front serves MCP clients at ``/mcp`` in both revisions (2026-07-28 per request, 2025-11-25 with
``initialize`` and its own ``Mcp-Session-Id``); its back is an upstream MCP server URL, or a stdio
server command it spawns (a stdio-to-HTTP bridge). ``--fault NAME`` (repeatable) turns on one relay
fault each (``faults.py``); ``--prefix`` prefixes tool names as aggregating gateways do.

usage: python -m tests.peers.gateway --port PORT (--upstream URL | --upstream-command 'CMD ...')
                                     [--prefix P] [--fault NAME]... [--allow-origin ORIGIN]... [--log FILE]
       python -m tests.peers.gateway --list-faults
"""
