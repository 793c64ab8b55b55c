"""findings.dedup_key names the cluster by its id, not its name: `<rule>/<cluster name>/...` becomes
`<rule>/<cluster id>/...`, so the next advice run updates the stored findings (and keeps their acknowledged or
snoozed status) instead of resolving them all and opening new ones. A key too long for the column after the
change, or one stored hashed (over 300 characters), or one that does not start with its rule and cluster name, is
left as it was: the advisor re-opens that one finding once.

Revision ID: 3e7a91c4b2d6
Revises: 8c5d3f42ce2a
Create Date: 2026-11-22 05:35:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "3e7a91c4b2d6"
down_revision: str | None = "8c5d3f42ce2a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# findings.dedup_key is String(300) (store/models.py; services/findings.py DEDUP_KEY_MAX).
_REKEY = """
UPDATE findings AS f
SET dedup_key = f.rule || '/' || {new} || '/' || substr(f.dedup_key, length(f.rule || '/' || {old} || '/') + 1)
FROM clusters AS c
WHERE c.id = f.cluster_id
  AND c.org_id = f.org_id
  AND left(f.dedup_key, length(f.rule || '/' || {old} || '/')) = f.rule || '/' || {old} || '/'
  AND length(f.dedup_key) - length({old}) + length({new}) <= 300
  AND NOT (length(f.dedup_key) = 300 AND f.dedup_key ~ '#[0-9a-f]{{16}}$')
"""


def upgrade() -> None:
    op.execute(_REKEY.format(old="c.name", new="c.id::text"))


def downgrade() -> None:
    op.execute(_REKEY.format(old="c.id::text", new="c.name"))
