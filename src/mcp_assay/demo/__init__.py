"""``mcp-assay demo``: the tool's main job on an embedded default, in one command.

A newcomer has no server of their own at hand. This package ships one: the drafts example server
(``drafts_server``, on the official Python SDK, in a naive and a hardened build that differ in
exactly what the behaviour cases catch) with the behaviour cases that drive it (``drafts.yaml``).
``orchestrate`` runs the demo: the server, the proxy in front of it, a real client session
(``session``), the active suite, live findings (``live``) and one merged report. Importing the
package imports none of that, so ``python -m mcp_assay.demo.drafts_server`` stays light.
"""

from __future__ import annotations

__all__: list[str] = []
