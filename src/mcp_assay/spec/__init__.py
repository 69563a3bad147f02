"""The protocol as mcp-assay knows it: revisions, their schemas, and the requirement catalogue.

Nothing here talks to a server. ``sources`` finds and verifies schema files, ``revisions`` turns
them into an ordered window, ``features`` says what each revision defines, ``validator`` checks
messages against the right definition, ``requirements`` holds the catalogue every check cites,
and ``rules`` holds the checks themselves.
"""

from mcp_assay.spec.revisions import Revision, SpecSet, load_spec

__all__ = ["Revision", "SpecSet", "load_spec"]
