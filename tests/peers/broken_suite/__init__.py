"""Deliberately broken MCP servers for the active suite's tests (one bug per case family)."""
