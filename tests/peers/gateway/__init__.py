"""A Streamable HTTP gateway of the project's own, faithful by default, with seeded relay faults.

Its front serves MCP clients at ``/mcp`` in both revisions (2026-07-28 per request, 2025-11-25 with
``initialize`` and its own ``Mcp-Session-Id``); its back is an upstream MCP server URL, or a stdio
server command it spawns (a stdio-to-HTTP bridge). ``--fault NAME`` (repeatable) turns on one relay
fault each (``faults.py``); ``--prefix`` prefixes tool names as aggregating gateways do.

Tests start it with ``tests.peers.topology.gateway_chain`` (or ``gateway``) in front of
``witness_server.py``, which reports the back hop in-band; ``probe.Probe`` is a raw client of either
revision, ``survey`` prints what any gateway does on the wire, ``sdk_drive`` and ``ts_drive.mjs`` drive the
official clients through one. ``--log FILE`` writes the gateway's ground truth as JSON lines, one per
event: ``request`` (method, ``front_id`` and the ``back_id`` it became, both sessions, the principal's
fingerprint), ``session`` (a front session and the upstream one it rides), ``cancel`` (the id a
cancellation named at the front and the one ``forwarded``), ``client-gone``, ``session-gone``, ``refused``,
``upstream-error``, ``gateway-error``. Tokens never appear in it.

usage: python -m tests.peers.gateway --port PORT (--upstream URL | --upstream-command 'CMD ...')
                                     [--prefix P] [--fault NAME]... [--allow-origin ORIGIN]... [--log FILE]
       python -m tests.peers.gateway --list-faults
"""
