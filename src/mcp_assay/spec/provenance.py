"""What a verdict was reached with: the catalogue and the schemas, by digest.

A recording names them in its header (and a report could be checked against them), so whoever reads
evidence later can tell whether it was judged with the requirements and schemas they have: the same
catalogue digest and the same schema digests mean the same rules and the same validation.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Any

from mcp_assay.spec.revisions import SpecSet

__all__ = ["catalogue_digest", "provenance"]


@cache
def catalogue_digest() -> str:
    """``sha256:<hex>`` of the requirement catalogue packaged with this mcp-assay (``requirements.yaml``)."""
    data = resources.files("mcp_assay.spec").joinpath("requirements.yaml").read_bytes()
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def provenance(spec: SpecSet | None) -> dict[str, Any]:
    """The header fields of a recording made with ``spec``: the catalogue's digest and each schema's, by revision
    (with whether it matched its pin)."""
    about: dict[str, Any] = {"catalogue": catalogue_digest()}
    if spec is not None:
        about["schemas"] = {
            revision.name: f"sha256:{revision.schema.sha256}" + ("" if revision.schema.pinned else " (unpinned)")
            for revision in spec.window
        }
    return about
