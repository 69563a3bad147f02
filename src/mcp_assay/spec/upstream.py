"""``spec pull --check``: does upstream publish revisions or schema changes the pins lack?

The pins (``pins.toml``) name each revision's schema at one upstream commit. Upstream moves on: a new
revision appears in the schema folder, or a published schema is corrected. This check reads the same
source ``spec pull`` reads (the specification's repository, or the mirror where one is given), at the
branch head instead of the pinned commit:

* the schema folder's listing (GitHub's contents API, or ``--index`` for a mirror): a dated folder newer
  than the newest pin is a revision mcp-assay does not know;
* each pinned revision's ``schema.json`` at the head: a sha256 other than the pin's is a change, told in
  ``$defs`` added, removed and changed when the pinned file is on disk to compare with.

Nothing is written. The outcome is one status per revision and an exit status for CI: something the pins
lack (1), nothing (0), or not everything could be checked (3).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from mcp_assay.spec.pull import download_url
from mcp_assay.spec.sources import Pin, is_revision_name, load_pins, sha256_of
from mcp_assay.vocabulary.verdicts import ExitCode

__all__ = ["INDEX_ENV", "Finding", "UpstreamCheck", "check_upstream", "default_index"]

INDEX_ENV = "MCP_ASSAY_SPEC_INDEX"
TOKEN_ENV = "GITHUB_TOKEN"
"""Sent (as a bearer token) to api.github.com only, where an anonymous listing is rate-limited."""
MAX_LISTING = 1024 * 1024
"""Bytes of a listing read: far past any schema folder's."""
MAX_SCHEMA = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Finding:
    """What the check found for one revision."""

    revision: str
    status: str
    """``new`` (upstream has it, no pin does), ``changed`` (its schema at the head is not the pinned one),
    ``unchanged``, ``gone`` (not at the head any more) or ``failed`` (could not be checked)."""
    detail: str = ""


@dataclass
class UpstreamCheck:
    """Every revision's finding, and where they were read."""

    source: str
    findings: list[Finding] = field(default_factory=list)
    unlisted: str = ""
    """Why upstream's revisions could not be listed (new ones could not be looked for), or ``""``."""

    @property
    def exit_code(self) -> int:
        """1 when the pins lack something upstream publishes; else 3 when something could not be checked; else 0."""
        if any(item.status in ("new", "changed", "gone") for item in self.findings):
            return 1
        if self.unlisted or any(item.status == "failed" for item in self.findings):
            return int(ExitCode.NOT_JUDGED)
        return 0


def _upstream() -> dict[str, str]:
    data = tomllib.loads(resources.files("mcp_assay.spec").joinpath("pins.toml").read_text(encoding="utf-8"))
    return {key: str(value) for key, value in data["upstream"].items()}


def default_index(mirror: str | None) -> str | None:
    """Upstream's listing of its schema folder; ``None`` with a mirror (whose listing only ``--index`` can name)."""
    if mirror:
        return None
    upstream = _upstream()
    return upstream["index_url"].format(repository=upstream["repository"], branch=upstream["branch"])


def _head_url(upstream: Mapping[str, str], pin: Pin, mirror: str | None) -> str:
    """Where ``pin``'s file is at the branch head: the mirror template filled in with the branch for ``{commit}``, or
    upstream's raw URL at the branch (a pin's own ``url`` names its pinned commit, never the head)."""
    if mirror:
        return download_url(pin, mirror)
    return upstream["raw_url"].format(repository=upstream["repository"], commit=pin.commit, path=pin.path)


def _get(client: httpx.Client, url: str, limit: int) -> tuple[bytes | None, str]:
    """The body at ``url`` (at most ``limit`` bytes) and ``""``, or ``None`` and why not (404 is ``"404"``)."""
    headers = {"accept": "application/vnd.github+json, application/json;q=0.9, */*;q=0.5"}
    token = os.environ.get(TOKEN_ENV)
    if token and urlsplit(url).hostname == "api.github.com":
        headers["authorization"] = f"Bearer {token}"
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 404:
                return None, "404"
            if response.status_code != 200:
                return None, f"HTTP {response.status_code}"
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > limit:
                    return None, f"larger than {limit} bytes"
            return body, ""
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"


def _listed(body: bytes) -> list[str] | None:
    """The revision folders a listing names: GitHub's contents JSON (objects with ``name``) or a list of names."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    names = [item.get("name") if isinstance(item, dict) else item for item in data]
    return sorted({name for name in names if isinstance(name, str) and is_revision_name(name)})


def _definitions(text: bytes) -> dict[str, str] | None:
    """Each ``$defs`` entry of a schema, as canonical JSON (to tell a changed one), or ``None``."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    defs = data.get("$defs") if isinstance(data, dict) else None
    if not isinstance(defs, dict):
        return None
    return {name: json.dumps(value, sort_keys=True) for name, value in defs.items()}


def _named(names: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _difference(pinned: bytes | None, head: bytes) -> str:
    """What changed, in ``$defs``, when the pinned file is at hand."""
    if pinned is None:
        return "pull the pinned schema (mcp-assay spec pull) to see which definitions changed"
    old, new = _definitions(pinned), _definitions(head)
    if old is None or new is None:
        return "one of them has no $defs to compare"
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(name for name in set(old) & set(new) if old[name] != new[name])
    parts = [f"{label} {len(names)} ({_named(names)})" for label, names in
             (("added", added), ("removed", removed), ("changed", changed)) if names]  # fmt: skip
    return "$defs: " + ("; ".join(parts) if parts else "the same definitions (formatting or other members differ)")


def _pinned_file(pin: Pin, folders: Iterable[Path]) -> bytes | None:
    """The pinned schema, from the first folder holding a file that matches the pin."""
    for folder in folders:
        candidate = folder / pin.revision / "schema.json"
        try:
            if candidate.is_file() and sha256_of(candidate) == pin.sha256:
                return candidate.read_bytes()
        except OSError:
            continue
    return None


def check_upstream(
    *,
    mirror: str | None = None,
    index: str | None = None,
    folders: Sequence[Path] = (),
    timeout: float = 30.0,
    pins: Mapping[str, Pin] | None = None,
) -> UpstreamCheck:
    """Compare the pins with upstream's branch head (or the mirror's). ``index`` overrides the listing's URL;
    ``folders`` are where pinned files may be found on disk (the cache, ``--spec-dir``) to tell what changed."""
    pins = dict(pins if pins is not None else load_pins())
    upstream = _upstream()
    branch = upstream["branch"]
    listing = index or default_index(mirror)
    result = UpstreamCheck(source=f"{mirror or upstream['repository']} at {branch}")
    with httpx.Client(timeout=timeout, follow_redirects=True, trust_env=True) as client:
        for revision, pin in sorted(pins.items()):
            url = _head_url(upstream, replace(pin, commit=branch), mirror)
            body, problem = _get(client, url, MAX_SCHEMA)
            if body is None:
                status = "gone" if problem == "404" else "failed"
                why = "not found (404)" if problem == "404" else problem
                result.findings.append(Finding(revision, status, f"{url}: {why}"))
                continue
            digest = hashlib.sha256(body).hexdigest()
            if digest == pin.sha256:
                result.findings.append(Finding(revision, "unchanged", f"matches its pin (sha256 {digest[:12]}…)"))
                continue
            detail = (
                f"the schema at {branch} is not the pinned one (sha256 {digest[:12]}…, pin {pin.sha256[:12]}…); "
                + _difference(_pinned_file(pin, folders), body)
            )
            result.findings.append(Finding(revision, "changed", detail))
        if listing is None:
            result.unlisted = (
                "a mirror serves files, not the schema folder's listing: give --index URL (GitHub's contents JSON of "
                "schema/, or a JSON list of revision names) to look for new revisions"
            )
            return result
        body, problem = _get(client, listing, MAX_LISTING)
        names = _listed(body) if body is not None else None
        if names is None:
            result.unlisted = f"{listing}: {problem or 'not a JSON list of the schema folder'}"
            return result
        newest = max(pins) if pins else ""
        for name in names:
            if name in pins or name <= newest:
                continue  # pinned, or an older revision the window leaves out on purpose
            url = _head_url(upstream, Pin(name, branch, f"schema/{name}/schema.json", "", ""), mirror)
            schema, problem = _get(client, url, MAX_SCHEMA)
            published = (
                f"its schema {url} (sha256 {hashlib.sha256(schema).hexdigest()[:12]}…)"
                if schema is not None
                else f"no schema yet at {url} ({problem})"
            )
            result.findings.append(Finding(name, "new", f"published upstream, not pinned: {published}"))
    return result
