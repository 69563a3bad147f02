"""RSA signing keys for the stub authorization server: generated once, kept in a PEM file.

The target caches the stub's key set, so the key must outlive a run: ``mcp-assay stub init``
writes it to ``stub.key_file`` (mode 0600) and every run signs with it. A second, *foreign* key
is generated per run for the probes that must not be accepted (a signature by a key the target
does not trust, announced through ``jku`` or an embedded ``jwk``).
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from mcp_assay.vocabulary.errors import ConfigError

__all__ = ["SigningKey"]


def _b64(number: int) -> str:
    data = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class SigningKey:
    """An RSA private key and the key id its JWKS entry carries."""

    private: rsa.RSAPrivateKey
    kid: str

    @classmethod
    def generate(cls, kid: str | None = None) -> SigningKey:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        made = cls(key, "")
        return cls(key, kid or made.thumbprint())

    @classmethod
    def load(cls, path: str | Path) -> SigningKey:
        """Read a PEM private key; the kid is its RFC 7638 thumbprint. A problem is one :class:`ConfigError`."""
        where = Path(path).expanduser()
        try:
            data = where.read_bytes()
        except OSError as exc:
            raise ConfigError(
                f"stub.key_file {path}: cannot read it ({exc.strerror or exc}); `mcp-assay stub init` creates one"
            ) from None
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"stub.key_file {path}: not an unencrypted PEM private key ({exc})") from None
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ConfigError(f"stub.key_file {path}: the stub signs with RS256, so the key must be RSA")
        made = cls(key, "")
        return cls(key, made.thumbprint())

    def save(self, path: str | Path) -> None:
        """Write the private key as PEM, readable by its owner only."""
        where = Path(path).expanduser()
        data = self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        descriptor = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)

    def jwk(self) -> dict[str, Any]:
        """The public key as a JWK (``kty``, ``n``, ``e``, ``kid``, ``alg``, ``use``)."""
        numbers = self.private.public_key().public_numbers()
        return {"kty": "RSA", "n": _b64(numbers.n), "e": _b64(numbers.e), "kid": self.kid, "alg": "RS256", "use": "sig"}

    def thumbprint(self) -> str:
        """RFC 7638 JWK thumbprint (SHA-256, base64url): a stable kid derived from the key itself."""
        numbers = self.private.public_key().public_numbers()
        canonical = f'{{"e":"{_b64(numbers.e)}","kty":"RSA","n":"{_b64(numbers.n)}"}}'
        digest = hashlib.sha256(canonical.encode("ascii")).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def sign(self, data: bytes) -> bytes:
        """RS256: RSASSA-PKCS1-v1_5 over SHA-256."""
        return self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())
