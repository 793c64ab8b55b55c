"""Password hashing (argon2id), opaque tokens stored only as hashes, CSRF tokens and secret encryption."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# argon2-cffi's defaults follow RFC 9106's second recommended option (argon2id, 64 MiB, t=3, p=4):
# https://argon2-cffi.readthedocs.io/en/stable/parameters.html and https://www.rfc-editor.org/rfc/rfc9106#section-4
_hasher = PasswordHasher()
# A fixed hash verified against when the account does not exist, so an unknown user costs the same time as
# a wrong password (no user enumeration by timing).
_DUMMY_HASH = _hasher.hash("headroom-dummy-password-for-timing")


def use_password_hasher(hasher: PasswordHasher) -> None:
    """Hash passwords (and the unknown-user stand-in) with `hasher` from now on; only the test suite calls this,
    to spend less than production's 64 MiB and three passes on each of its thousands of log-ins."""
    global _hasher, _DUMMY_HASH
    _hasher = hasher
    _DUMMY_HASH = hasher.hash("headroom-dummy-password-for-timing")

API_TOKEN_PREFIX = "hr_"


def hash_password(password: str) -> str:
    """Hash a password with argon2id."""
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Check a password against its hash; spends the same work when there is no hash."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def new_token(prefix: str = "") -> str:
    """Return a fresh opaque token (256 bits of randomness)."""
    return prefix + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """Hash a high-entropy token for storage (SHA-256 is enough: the input is random, not a password)."""
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token_for(session_token: str, secret_key: str) -> str:
    """Derive the CSRF token bound to a session (double-submit cookie, signed so it can't be planted)."""
    return hmac.new(secret_key.encode(), b"csrf:" + session_token.encode(), hashlib.sha256).hexdigest()


def new_external_id() -> str:
    """Return an AWS STS external ID for an organisation (AWS allows 2-1224 chars of [\\w+=,.@:/-])."""
    return "headroom-" + secrets.token_hex(16)


class SecretBox:
    """Encrypt source credentials at rest with a key derived from HEADROOM_SECRET_KEY (Fernet: AES-128-CBC+HMAC)."""

    def __init__(self, secret_key: str) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"headroom-secretbox", info=b"v1").derive(
            secret_key.encode()
        )
        self._fernet = Fernet(base64.urlsafe_b64encode(key))

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, ciphertext: str) -> str:
        try:
            return self._fernet.decrypt(ciphertext.encode()).decode()
        except InvalidToken as exc:  # pragma: no cover - only on a changed secret key
            raise ValueError("stored secret cannot be decrypted with the current HEADROOM_SECRET_KEY") from exc
