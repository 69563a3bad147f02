"""Shared fixtures: the protocol schemas (from MCP_ASSAY_SPEC_DIR) and hand-built traffic."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from mcp_assay.spec import SpecSet, load_spec
from mcp_assay.spec import rules as _rules  # noqa: F401 - register every check before any test runs

ROOT = Path(__file__).resolve().parent.parent


def spec_dir() -> Path:
    """Tests read the official schemas from MCP_ASSAY_SPEC_DIR (CI points it at ../shared/spec)."""
    configured = os.environ.get("MCP_ASSAY_SPEC_DIR")
    path = Path(configured).resolve() if configured else ROOT.parent / "shared" / "spec"
    if not (path / "2026-07-28" / "schema.json").is_file():
        pytest.exit(
            f"the MCP schemas are not at {path}; set MCP_ASSAY_SPEC_DIR to a folder of <revision>/schema.json",
            returncode=4,
        )
    return path


def pytest_configure(config: pytest.Config) -> None:
    """A relative MCP_ASSAY_SPEC_DIR (such as ``../shared/spec``) names the same folder for every subprocess,
    whatever directory a test starts it in."""
    configured = os.environ.get("MCP_ASSAY_SPEC_DIR")
    if configured:
        os.environ["MCP_ASSAY_SPEC_DIR"] = str(Path(configured).resolve())
    _keep_bytecode_outside_the_checkout()
    _share_hypothesis_files()


def _keep_bytecode_outside_the_checkout() -> None:
    """With PYTHONDONTWRITEBYTECODE set (some machines set it to keep checkouts clean), every Python process the
    suite starts (its workers, the peers, each ``mcp-assay`` subprocess) compiles every module it
    imports from source again, about half a second of CPU each. The suite writes the bytecode under the temp
    directory instead (``PYTHONPYCACHEPREFIX``, still nothing in the checkout), and every later process reads it.
    Set before xdist starts its workers, so they and every subprocess inherit it; an explicit prefix is kept."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = str(Path(tempfile.gettempdir()) / f"mcp-assay-tests-pycache-{os.getuid()}")
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


def _share_hypothesis_files() -> None:
    """hypothesis builds tables once and keeps them in its storage folder: the characters UTF-8 encodes (a loop over
    every code point, about 1.4 s of CPU), Unicode's categories, the constants of each source file. mcp-assay's
    explore puts that folder in the user cache, and each test has a fresh one (``_isolated_cache``), so every
    process that explores (each worker, each ``mcp-assay run --explore``) built the tables again. The suite names
    one folder under the temp directory for all of them (``HYPOTHESIS_STORAGE_DIRECTORY``, which explore honours;
    nothing in the checkout either); an explicit one is kept. The test of explore's default folder unsets it."""
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        folder = Path(tempfile.gettempdir()) / f"mcp-assay-tests-hypothesis-{os.getuid()}"
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(folder)


@pytest.fixture(scope="session")
def spec_path() -> Path:
    return spec_dir()


@pytest.fixture(scope="session")
def spec(spec_path: Path) -> SpecSet:
    return load_spec(spec_dir=spec_path)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real user cache from a test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.delenv("MCP_ASSAY_CACHE_DIR", raising=False)
