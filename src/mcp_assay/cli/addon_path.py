"""``mcp-assay addon-path``: where the mitmproxy addon script is, for ``mitmdump -s``.

Its own module, apart from ``proxy``: printing a path should not import the proxy's machinery (the
tests ask for it before every ``mitmdump`` they start).
"""

from __future__ import annotations

from pathlib import Path

import click

from mcp_assay.cli.command import AssayCommand

__all__ = ["addon_path_command", "addon_script"]


def addon_script() -> Path:
    """The file mitmproxy loads with ``-s``."""
    import mcp_assay.addon

    return Path(mcp_assay.addon.__file__ or "").resolve()


@click.command(
    "addon-path",
    cls=AssayCommand,
    short_help="Print the path of the mitmproxy addon script (mitmdump -s).",
    reads=(("nothing", "it prints where the installed addon is."),),
)
def addon_path_command() -> None:
    """Print the path of the mitmproxy addon script: mitmdump -s "$(mcp-assay addon-path)" ...

    \b
    mitmdump -s "$(mcp-assay addon-path)" --mode reverse:http://127.0.0.1:8000 --listen-host 127.0.0.1 -p 8080
    Keep --listen-host 127.0.0.1: mitmdump listens on every interface otherwise. When mitmdump stops it exits
    with the verdict's exit code, as mcp-assay proxy does (0 conformant, 1 a requirement failed, 3 nothing
    judged; --set mcp_assay_exit_code=false keeps mitmproxy's 0), and --set mcp_assay_report=json:FILE holds
    the same verdict (verdict.exit_code) for CI.
    """
    click.echo(str(addon_script()))
