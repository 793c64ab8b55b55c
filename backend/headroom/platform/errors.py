"""One error hierarchy for the whole app; the API renders it as {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Any

from headroom.platform.labels import labelled


class AppError(Exception):
    """A domain error with a stable machine code and an HTTP status for the API shell."""

    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, *, details: Any = None, code: str | None = None) -> None:
        # A message may start with the machine name of its field ("base_url: ..."): people read its label.
        message = labelled(message)
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class NotAuthenticated(AppError):
    status_code = 401
    code = "not_authenticated"


class InvalidCredentials(AppError):
    status_code = 401
    code = "invalid_credentials"


class PermissionDenied(AppError):
    status_code = 403
    code = "forbidden"


class CsrfFailed(AppError):
    status_code = 403
    code = "csrf_failed"


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class InvalidInput(AppError):
    status_code = 422
    code = "validation_error"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "payload_too_large"


class RateLimited(AppError):
    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after_seconds: int, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.retry_after_seconds = retry_after_seconds


class ServiceUnavailable(AppError):
    status_code = 503
    code = "unavailable"


class QueueUnavailable(ServiceUnavailable):
    """The job queue (Redis) could not be reached in time, so the job was not queued; the client may retry."""

    code = "queue_unavailable"

    def __init__(self, message: str, *, retry_after_seconds: int = 30, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.retry_after_seconds = retry_after_seconds
