"""Real MCP peers the end-to-end tests drive, started as subprocesses on 127.0.0.1."""
