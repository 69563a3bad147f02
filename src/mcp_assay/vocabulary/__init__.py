"""The words every part of mcp-assay shares: the protocol's names (headers, ``_meta`` keys,
error codes, eras, revisions), verdicts and their replays, shell words, and mcp-assay's own errors.

The lowest room of the core: it imports nothing else of mcp-assay (``tests/test_architecture.py``).
"""
