"""One model of what crossed the wire, and its readers: JSON text, JSON-RPC messages, event streams, lines,
the exchange model (:mod:`.model`), the exchange log (:mod:`.traffic`), a gateway's two hops and what an
injection did to an exchange.

Imports the vocabulary and the cases only (``tests/test_architecture.py``).
"""
