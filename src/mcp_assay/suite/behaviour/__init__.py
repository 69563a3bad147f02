"""Behaviour cases: what a principal is offered, what a refusal changed, and whether a cancelled call still writes.

A friendly client only shows that a server answers. These cases send what no SDK sends and prove
the outcome with storage rather than with the server's word: a *witness* (an MCP read, an HTTP
route or a shell command the user names) is read before and after each case. They run once per
era the server serves (2026-07-28 and 2025-11-25), over the run's transport, and only when the
``--config`` file describes them (:mod:`~mcp_assay.suite.behaviour.config`):

* ``tools/list`` captured for every principal of ``expect.tools_by_principal`` (BEH-04);
* each write tool calibrated (one accepted call must move its witness), then called with an
  argument its strict schema forbids and by a principal that must not use it, the witness read
  after each (BEH-05, BEH-03);
* the cancel race: the write tool called with a client timeout shorter than its work, given up
  the way the era and transport say, the witness read after the settle time (BEH-06);
* a handle minted by one principal presented by another (BEH-07), and reads that must not write
  (BEH-08).

The family itself is :mod:`~mcp_assay.suite.behaviour.family`. Probes only produce traffic and
witness observations; :mod:`mcp_assay.spec.rules.behaviour.principals`
judges them, so ``mcp-assay validate`` on a recording of the run reaches the same verdicts.
"""

from mcp_assay.suite.behaviour.config import BEHAVIOUR_KEYS, BehaviourConfig, parse_behaviour

__all__ = ["BEHAVIOUR_KEYS", "BehaviourConfig", "parse_behaviour"]
