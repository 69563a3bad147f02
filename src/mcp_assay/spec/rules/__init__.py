"""Every rule mcp-assay judges traffic with, grouped by catalogue area; importing this package registers them.

An area with several rule modules is a package (``auth/``, ``http/``, ``versions/`` ...) whose
``__init__`` names its rule modules, with the helpers only its rules use beside them; an area with
one module is a module (``prompts.py``, ``stdio.py`` ...). Helpers several areas share live in
``shared/``. Rules are pure functions over an exchange log, declared with
:mod:`mcp_assay.spec.checks`; they judge live proxy traffic, stdio taps, active probes and
recordings alike. Adding a rule means adding a function to the module of its area; adding a
module means naming it in its area's ``__init__``.
"""

from . import (
    auth,
    behaviour,
    cancellation,
    completion,
    envelope,
    gateway,
    handshake,
    http,
    interop,
    jsonrpc,
    logging,
    mrtr,
    pagination,
    progress,
    prompts,
    resources,
    results,
    schema,
    stdio,
    subscriptions,
    suite,
    tools,
    versions,
)

AREAS = (
    jsonrpc, schema, envelope, results, versions, handshake, http, stdio, cancellation, progress, logging,
    pagination, subscriptions, tools, resources, prompts, completion, mrtr, auth, behaviour, interop, suite, gateway,
)  # fmt: skip
"""Every area, in the order a reader meets the protocol."""
