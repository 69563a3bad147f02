"""Authorization, a server run locally (AUTH-31).

A server started on the developer's machine should listen on loopback only, so nothing else on
the network can reach it. Only a server mcp-assay starts itself (``run --serve``) can have its
listening sockets read; the run records them as a ``listening`` observation.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_assay.spec.checks import Finding, failed, log_check, not_applicable, passed, unverified
from mcp_assay.spec.context import Context
from mcp_assay.spec.rules.auth.facts import is_loopback_host
from mcp_assay.spec.rules.auth.use import auth_use
from mcp_assay.spec.rules.shared.reads import ANY_AUTHORIZATION
from mcp_assay.vocabulary.verdicts import Level
from mcp_assay.wire.model import LISTENING

NOT_LAUNCHED = (
    "only a server mcp-assay starts itself can have its listening sockets read: `mcp-assay run -u URL --serve COMMAND`"
)


def _host(address: str) -> str:
    return address.rpartition(":")[0].strip("[]")


@log_check(requirements="AUTH-31", level=Level.SHOULD, subject="launched servers", follows=ANY_AUTHORIZATION)
def local_servers_listen_on_loopback(ctx: Context) -> Iterator[Finding]:
    """A server run locally listens on loopback addresses only (never on every interface).

    The listening sockets are judged whenever the run read them, authorization or not (the
    requirement comes from the transport's security notes); without them the item follows the
    AUTH block's gate: not applicable where authorization is not in use."""
    observations = ctx.log.observations(LISTENING)
    for observation in observations:
        addresses = observation.data.get("addresses")
        command = observation.data.get("command", "the server")
        if not isinstance(addresses, list):
            yield unverified(str(observation.data.get("why") or "its listening sockets could not be read"))
        elif not addresses:
            yield unverified(f"{command} listens on no TCP socket mcp-assay could attribute to its processes")
        elif wide := [address for address in addresses if not is_loopback_host(_host(address))]:
            every = [address for address in wide if _host(address) in ("0.0.0.0", "::")]
            how = " (every interface)" if every else ""
            yield failed(observation, f"{command} listens on {', '.join(wide)}{how}, not on loopback only")
        else:
            yield passed(observation, f"{command} listens on {', '.join(addresses)} only")
    if not observations:
        use = auth_use(ctx)
        yield unverified(NOT_LAUNCHED) if use.endpoints else not_applicable(use.reason)
