"""What a user hands mcp-assay: one check per kind of value (URLs, ports, headers, commands), and the
files named on the command line.

The top room of the core (``tests/test_architecture.py``).
"""
