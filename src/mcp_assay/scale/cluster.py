"""Judging units on a cluster, through Dask's distributed scheduler (the optional ``[cluster]`` extra).

``validate --cluster tcp://scheduler:8786`` (or ``MCP_ASSAY_CLUSTER``) hands each unit to the cluster as
one task; Dask places them on its workers, and the results come back here, where they are reduced
into the one report as a local run's are (:mod:`mcp_assay.scale.reduce`). Nothing here schedules:
Dask does. The schemas travel with the work (scattered to every worker once), so a worker needs only
mcp-assay itself, of the same version (checked before any task is sent), and the recordings: local
paths every worker can read (a shared file system), or fsspec URLs the workers can open (object
storage). A worker judges one unit at a time per thread; its memory is that of one unit, whatever
the length of the recording (docs/scale.md has the figure).
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mcp_assay import __version__
from mcp_assay.scale.units import PortableSpec, Unit, UnitResult, checks_named, judge_unit
from mcp_assay.spec.checks import Check
from mcp_assay.spec.revisions import SpecSet
from mcp_assay.vocabulary.errors import AssayError, ConfigError

__all__ = ["CLUSTER_ENV", "ClusterError", "judge_on_cluster"]

CLUSTER_ENV = "MCP_ASSAY_CLUSTER"
CONNECT_TIMEOUT = "30s"
NO_DASK = "--cluster needs Dask's distributed scheduler: pip install 'mcp-assay[cluster]'"


class ClusterError(AssayError):
    """The cluster cannot judge: nothing answers at its address, or its workers lack this mcp-assay (exit 3)."""


def _version() -> str:
    """Run on every worker: the mcp-assay it would judge with."""
    import mcp_assay

    return mcp_assay.__version__


def _judge_task(unit: Unit, portable: PortableSpec, names: tuple[str, ...] | None) -> UnitResult:
    """One task: judge one unit on a worker."""
    return judge_unit(unit, portable.build(), checks_named(names))


def judge_on_cluster(
    address: str, plan: Callable[[int], Sequence[Unit]], spec: SpecSet, checks: list[Check] | None
) -> Iterator[UnitResult]:
    """Every unit's result as it is ready, each judged as one task on the cluster at ``address``; ``plan`` cuts
    the work into units for the cluster's threads (the jobs it runs at once)."""
    try:
        distributed: Any = importlib.import_module("distributed")
    except ImportError as exc:
        raise ConfigError(NO_DASK) from exc
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"no Dask scheduler answers at {address} ({exc})") from exc
    try:
        _same_version(client, address)
        units = plan(sum(client.nthreads().values()))
        names = tuple(check.name for check in checks) if checks is not None else None
        [portable] = client.scatter([PortableSpec.of(spec)], broadcast=True, hash=False)
        run = uuid.uuid4().hex[:12]
        futures = [
            client.submit(
                _judge_task,
                unit,
                portable,
                names,
                key=f"mcp-assay-unit-{run}-{unit.index}-{unit.share}",
                pure=False,
                priority=unit.size,
            )  # fmt: skip
            for unit in units
        ]
        for future in distributed.as_completed(futures, loop=client.loop):
            result: UnitResult = future.result()
            future.release()  # the cluster need not keep it: it is folded into the report here
            yield result
    finally:
        client.close()


def _same_version(client: Any, address: str) -> None:
    try:
        versions: dict[str, str] = client.run(_version)
    except Exception as exc:  # noqa: BLE001 - a worker without mcp-assay fails to unpickle the function
        raise ClusterError(f"the workers of {address} cannot run mcp-assay ({type(exc).__name__}: {exc})") from exc
    if not versions:
        raise ClusterError(f"the cluster at {address} has no workers")
    other = {worker: version for worker, version in versions.items() if version != __version__}
    if other:
        shown = ", ".join(f"{worker}: {version}" for worker, version in sorted(other.items())[:3])
        raise ClusterError(f"the workers of {address} run another mcp-assay than {__version__} ({shown})")
