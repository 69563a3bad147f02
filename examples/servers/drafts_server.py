"""The drafts example server: a naive and a hardened build on the official Python SDK (mcp 2.3.0).

Its code ships inside mcp-assay, as ``mcp_assay.demo.drafts_server`` (``src/mcp_assay/demo/``),
so ``mcp-assay demo`` can start it after a plain ``pip install``; read it there. This file keeps
the documented command working:

    python examples/servers/drafts_server.py --build naive --store /tmp/drafts.json http 8765
    python examples/servers/drafts_server.py --build hardened --store /tmp/drafts.json stdio
"""

from __future__ import annotations

import sys

from mcp_assay.demo.drafts_server import main

if __name__ == "__main__":
    main(sys.argv[1:])
