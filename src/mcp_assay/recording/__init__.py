"""The recording, and what else mcp-assay writes: the JSONL record format and its readers, captures
read from files, redaction, logs, the edge audit, whether a capture met a peer, and a capture's notes.

Imports the vocabulary, the cases and the wire only (``tests/test_architecture.py``).
"""
