"""``spec pull``: download each pinned schema from upstream into the user cache, verified.

The file is fetched from the pinned commit (never a branch), its sha256 compared with the pin
before anything is written, and written atomically, so the cache only ever holds files the pins
vouch for. A mirror URL template can replace GitHub for air-gapped machines.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx

from mcp_assay.spec.sources import Pin, load_pins, sha256_of
from mcp_assay.userinput.values import URL, BadValue
from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["MIRROR_ENV", "PullResult", "check_mirror", "download_url", "pull_schemas"]

MIRROR_ENV = "MCP_ASSAY_SPEC_MIRROR"


@dataclass(frozen=True, slots=True)
class PullResult:
    revision: str
    path: Path
    status: str
    """``downloaded``, ``present`` (already cached and verified) or ``failed``."""
    detail: str = ""


def check_mirror(mirror: str) -> str:
    """A mirror template that fills in to an http(s) URL for every pin; a :class:`ConfigError` otherwise."""
    for pin in load_pins().values():
        try:
            URL(download_url(pin, mirror))
        except (ValueError, KeyError, IndexError) as exc:
            detail = str(exc) if isinstance(exc, BadValue) else f"{type(exc).__name__}: {exc}"
            raise ConfigError(
                f"--mirror {mirror}: not a URL template with {{commit}}, {{path}} and {{revision}} ({detail})"
            ) from None
    return mirror


def download_url(pin: Pin, mirror: str | None) -> str:
    """Where ``pin``'s file is fetched from: upstream at the pinned commit, or the mirror template filled in."""
    if not mirror:
        return pin.url
    return mirror.format(commit=pin.commit, path=pin.path, revision=pin.revision, repository="")


def pull_schemas(
    cache: Path,
    *,
    mirror: str | None = None,
    force: bool = False,
    timeout: float = 30.0,
    pins: Iterable[Pin] | None = None,
) -> list[PullResult]:
    """Fetch every pinned revision into ``cache/<revision>/schema.json``."""
    results = []
    with httpx.Client(timeout=timeout, follow_redirects=True, trust_env=True) as client:
        for pin in pins if pins is not None else load_pins().values():
            target = cache / pin.revision / "schema.json"
            if target.is_file() and not force and sha256_of(target) == pin.sha256:
                results.append(PullResult(pin.revision, target, "present"))
                continue
            url = download_url(pin, mirror)
            try:
                response = client.get(url)
            except httpx.HTTPError as exc:
                results.append(PullResult(pin.revision, target, "failed", f"{url}: {exc}"))
                continue
            if response.status_code != 200:
                results.append(PullResult(pin.revision, target, "failed", f"{url}: HTTP {response.status_code}"))
                continue
            digest = hashlib.sha256(response.content).hexdigest()
            if digest != pin.sha256:
                results.append(
                    PullResult(
                        pin.revision, target, "failed", f"{url}: sha256 {digest} does not match pin {pin.sha256}"
                    )
                )
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".schema-", suffix=".json")
            with os.fdopen(handle, "wb") as out:
                out.write(response.content)
            os.replace(temporary, target)
            results.append(PullResult(pin.revision, target, "downloaded", url))
    return results
