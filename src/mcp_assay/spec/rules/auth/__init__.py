"""Authorization (AUTH-): Protected Resource Metadata, challenges, credentials, tokens, scopes and a
client's OAuth flow.

Rule modules (each registers its checks when imported):

* :mod:`.metadata`
* :mod:`.challenges`
* :mod:`.credentials`
* :mod:`.tokens`
* :mod:`.scopes`
* :mod:`.discovery`
* :mod:`.flow`
* :mod:`.flow_binding`
* :mod:`.clients`
* :mod:`.local`

Helpers beside them (no checks):

* :mod:`.facts`: challenges, presented credentials, JWTs and metadata URLs (the suite's token probes use it too)
* :mod:`.documents`: the Protected Resource Metadata and authorization server metadata documents in the traffic
* :mod:`.use`: where the traffic shows authorization in use, and how a probe's answer is read (the
  behaviour rules use it too)
* :mod:`._oauth_flow`: a client's OAuth flow steps as a capture shows them
"""

from . import challenges, clients, credentials, discovery, flow, flow_binding, local, metadata, scopes, tokens

RULE_MODULES = (
    metadata,
    challenges,
    credentials,
    tokens,
    scopes,
    discovery,
    flow,
    flow_binding,
    clients,
    local,
)
"""The modules of this area that declare checks (importing them registered their checks)."""
