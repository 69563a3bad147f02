"""Which addresses the suite fetches when the target hands it one: its client hygiene, in one place.

The suite is a client of whatever the target names: a ``resource_metadata`` URL in a challenge,
the authorization servers in its metadata, the endpoints in theirs. Following them blindly would
let a target aim the suite at anything it can reach (server-side request forgery), so the
authorization probes and the sign-in ask :func:`may_fetch` first.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from mcp_assay.spec.rules.auth.facts import is_loopback_host

__all__ = ["PLAIN_HTTP", "may_fetch"]

PLAIN_HTTP = "plain http to a host that is not loopback"
"""The refusal of an address that is fine but for its scheme (the sign-in lets the user allow it)."""


def may_fetch(url: str, target: str) -> str | None:
    """Why the suite will not fetch a URL the target handed it (``None``: it may).

    Same origin as the target, ``https``, or ``http`` on loopback; an IP literal in a private or
    link-local range only when the target itself is in such a range (server-side request forgery
    hygiene: the suite is a client of whatever the target names)."""
    parts, own = urlsplit(url), urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an absolute http(s) URL"
    if (parts.scheme, parts.netloc.lower()) == (own.scheme, own.netloc.lower()):
        return None
    host = parts.hostname
    if parts.scheme == "http" and not is_loopback_host(host):
        return PLAIN_HTTP
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if address.is_loopback:
        return None if is_loopback_host(own.hostname or "") else "a loopback address named by a remote target"
    if address.is_private or address.is_link_local or address.is_reserved:
        try:
            target_address = ipaddress.ip_address((own.hostname or "").strip("[]"))
        except ValueError:
            return "a private or link-local address named by a public target"
        if not (target_address.is_private or target_address.is_link_local):
            return "a private or link-local address named by a public target"
    return None
