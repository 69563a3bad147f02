"""A stand-in authorization server the target trusts, for the token-validation probes (AUTH-16..19).

Whether a server checks a token's audience, issuer, signature and lifetime can only be proved
with tokens it would otherwise accept: a rejection says something about the audience only if the
same token with the right audience is served. So the suite mints the tokens itself, signed with a
key the target is configured to trust (its JWKS is served by :mod:`~mcp_assay.suite.stub.server`),
and changes one property per probe. ``keys`` holds the signing keys, ``tokens`` mints the JWTs,
``config`` reads the ``stub`` section of the config file, and ``server`` serves the metadata and
keys and notes every fetch (a fetch of the foreign key set is evidence on its own). So that a real
MCP client can be checked too, the stub is also a working OAuth 2.1 authorization server:
``grants`` registers clients and runs the authorization-code (PKCE) and refresh grants, whose
access tokens are minted like the control token.
"""
