"""An alert channel's url_hint (what every member sees) no longer carries the URL's user:password@: the stored
hints of channels saved before are rewritten to scheme and host. The credential itself stays in the encrypted URL.

Revision ID: d4f7b2a9e6c1
Revises: c3e8a1f5d2b7
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "d4f7b2a9e6c1"
down_revision: str | None = "c3e8a1f5d2b7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# scheme://user:pass@host[:port] -> scheme://host[:port]; email channels' hints are addresses, left alone
REWRITE_HINTS = (
    r"UPDATE alert_channels SET url_hint = regexp_replace(url_hint, '^([a-zA-Z][a-zA-Z0-9+.-]*://).*@', '\1') "
    r"WHERE kind <> 'email' AND url_hint ~ '^[a-zA-Z][a-zA-Z0-9+.-]*://.*@'"
)


def upgrade() -> None:
    op.execute(REWRITE_HINTS)


def downgrade() -> None:
    pass  # the credential is not brought back into a hint shown to every member
