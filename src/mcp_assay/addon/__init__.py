"""mcp-assay's passive half: the mitmproxy addon and the stdio tap.

This file is also the addon *script*: ``mitmdump -s "$(mcp-assay addon-path)"`` loads it and
finds ``addons`` (the script's addon makes mitmdump exit with the verdict's exit code). The addon
is built on first access, so importing the package (the stdio tap does) never pays for importing
mitmproxy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["addons"]

_addons: list[Any] = []


def __getattr__(name: str) -> Any:
    if name == "addons":
        if not _addons:
            from mcp_assay.addon.assay import Assay

            assay = Assay(script=True)
            # the companions first: the observer records what the injector did, and the probes end before it
            _addons.extend([assay.injector, assay.server_probe, assay])
            # mitmproxy looks every hook name up on the script for every event: from now on a plain attribute
            # answers, and a missing name fails without calling back into Python (measured at saturation)
            globals()["addons"] = _addons
            globals().pop("__getattr__", None)
        return _addons
    raise AttributeError(name)
