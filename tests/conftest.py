"""Shared fixtures: the protocol schemas (from MCP_ASSAY_SPEC_DIR) and hand-built traffic."""

from __future__ import annotations

import os
import re
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
    _compile_once_before_the_workers_start(config)


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


_INSTALLED_PEERS = re.compile(r"[/\\]tests[/\\]peers[/\\](node|corpus|intermediaries)[/\\]")
"""The peers tests/peers/setup.sh installs (other projects' code, thousands of modules): nothing to compile ahead."""


def _compile_once_before_the_workers_start(config: pytest.Config) -> None:
    """See :func:`_compile_ahead`: any surprise there (pytest's private helpers changed) only costs the speed-up."""
    try:
        _compile_ahead(config)
    except Exception:  # the workers compile and rewrite for themselves, as they always did
        return


def _compile_ahead(config: pytest.Config) -> None:
    """On a fresh checkout (CI's clean clone) nothing is compiled yet: each xdist worker compiled every module of
    ``src`` and rewrote the asserts of every test module for itself, all at the same time, about 13 s of CPU per
    worker that one process can do for all of them. Before the workers start, the controller compiles ``src``
    and ``tests`` and writes the rewritten test modules where pytest's own import hook looks for them (its cache,
    beside the bytecode); a worker then finds them and only checks they are current. Nothing changes what a test
    runs: a stale or missing file is rewritten as before, and where pytest's internals differ nothing is done."""
    if sys.dont_write_bytecode or hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None):
        return
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, get_cache_dir
        from _pytest.assertion.rewrite import assertstate_key as _state_key

        state = config.stash[_state_key]
    except (ImportError, KeyError):
        return
    test_modules = []
    for folder, subfolders, names in os.walk(ROOT / "tests"):
        subfolders[:] = [name for name in subfolders if not _INSTALLED_PEERS.search(os.path.join(folder, name, ""))]
        test_modules += [Path(folder, name) for name in names if re.fullmatch(r"test_.*\.py|conftest\.py", name)]
    cached = {path: get_cache_dir(path) / (path.name[:-3] + PYC_TAIL) for path in test_modules}
    stale = [path for path, pyc in cached.items() if _read_pyc(path, pyc, state.trace) is None]
    if not stale:  # compiled by an earlier run: nothing to do (checking src as well cost seconds)
        return
    import compileall

    skipped = re.compile(rf"[/\\](test_[^/\\]*|conftest)\.py$|{_INSTALLED_PEERS.pattern}")  # rewritten below; not ours
    for folder, skip in (("src", None), ("tests", skipped)):
        compileall.compile_dir(ROOT / folder, quiet=2, rx=skip, workers=0 if (os.cpu_count() or 1) > 1 else 1)
    for path in stale:
        try:
            cached[path].parent.mkdir(parents=True, exist_ok=True)
            source_hash, code = _rewrite_test(path, config)
            _write_pyc(state, code, source_hash, cached[path])
        except Exception:  # a module pytest cannot rewrite here is rewritten (and reported) by the worker
            continue


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
