"""digest: digest_sends (one row per org and ISO week, the send's idempotency key), org_digest_settings
(on/off, include viewers), email_verifications (who gets the digest)

Revision ID: 8c5d3f42ce2a
Revises: b8f31c6d2e47
Create Date: 2026-11-22 04:53:18.950107+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '8c5d3f42ce2a'
down_revision: str | None = 'b8f31c6d2e47'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('digest_sends',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('week_start', sa.Date(), nullable=False),
    sa.Column('status', sa.Enum('sending', 'sent', 'retrying', 'failed', 'skipped', name='digest_send_status', native_enum=False, create_constraint=True, length=16), nullable=False),
    sa.Column('recipients', sa.Integer(), server_default='0', nullable=False),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_digest_sends_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_digest_sends')),
    sa.UniqueConstraint('org_id', 'week_start', name=op.f('uq_digest_sends_org_id_week_start'))
    )
    op.create_index(op.f('ix_digest_sends_org_id'), 'digest_sends', ['org_id'], unique=False)
    op.create_table('email_verifications',
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('verified_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_email_verifications_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_email_verifications'))
    )
    op.create_table('org_digest_settings',
    sa.Column('org_id', sa.Uuid(), nullable=False),
    sa.Column('enabled', sa.Boolean(), server_default=sa.text('true'), nullable=False),
    sa.Column('include_viewers', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], name=op.f('fk_org_digest_settings_org_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('org_id', name=op.f('pk_org_digest_settings'))
    )


def downgrade() -> None:
    op.drop_table('org_digest_settings')
    op.drop_table('email_verifications')
    op.drop_index(op.f('ix_digest_sends_org_id'), table_name='digest_sends')
    op.drop_table('digest_sends')
