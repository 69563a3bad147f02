"""``python -m mcp_assay`` runs the command line."""

from mcp_assay.cli import main

main()
