"""Helpers several rule areas share; they declare no checks.

* :mod:`.common`: small helpers every area uses (error codes, schema findings, the exchange of a message)
* :mod:`.envelopes`: reading a request's envelope (``params._meta``, where it was sent, key grammar)
* :mod:`.server_features`: what the tools, prompts, resources, completion and MRTR rules share
* :mod:`.answers`: what those rules ask of a server's answer to one request
* :mod:`.selected`: which answers belong to another requirement's case (a broader rule's exclusions)
* :mod:`.streams` and :mod:`.stream_facts`: requests in flight, cancellations and listen streams
* :mod:`.header_mirroring`: how a 2026 request mirrors its body into headers
"""
