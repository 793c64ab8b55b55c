"""A finding's recommended changes and a patch's changes are stored as the domain Change (typed JSON).

recommendations: the flattened columns (target, key, entity as a string, current, proposed, online, reason)
become one JSONB `change`: {target, key, entity, current, proposed, online, reason}, `entity` being an EntityRef
{kind, id, node, instance_id, volume_id, status_address}. An existing row's entity is its finding's (kind, id)
with the old string put where the patcher looked for it: a tikv change's node address in `status_address`, an
AWS change's volume or instance id in `volume_id` / `instance_id` (the next advice run rewrites every row of an
active finding with the advisor's own entity).

patches: each stored change loses its `finding` reference ({rule, dedup_key, title}) and its tikvconf entity
({node, store_address, volume_id, instance_id}) for an EntityRef; the finding's label (what the artefacts print)
moves to `change_sources`, one per change in the same order.

Data is moved in SQL; the downgrade rebuilds the old columns and JSON from the new ones.

Revision ID: c81f3a6d2b47
Revises: a4d92c7e1f05
Create Date: 2026-11-23 15:00:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c81f3a6d2b47"
down_revision: str | None = "a4d92c7e1f05"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_RECOMMENDATION_COLUMNS = ("target", "key", "entity", "current", "proposed", "online", "reason")


def upgrade() -> None:
    op.add_column(
        "recommendations", sa.Column("change", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.execute(
        """
        UPDATE recommendations AS r SET change = jsonb_build_object(
            'target', r.target,
            'key', r.key,
            'entity', jsonb_strip_nulls(jsonb_build_object(
                'kind', CASE f.entity_kind WHEN 'tikv_node' THEN 'node' ELSE f.entity_kind END,
                'id', f.entity_id,
                'status_address', CASE WHEN r.target = 'tikv' THEN r.entity END,
                'volume_id', CASE WHEN r.target = 'aws' AND r.entity LIKE 'vol-%' THEN r.entity END,
                'instance_id', CASE WHEN r.target = 'aws' AND r.entity LIKE 'i-%' THEN r.entity END
            )),
            'current', COALESCE(r.current, 'null'::jsonb),
            'proposed', COALESCE(r.proposed, 'null'::jsonb),
            'online', r.online,
            'reason', r.reason
        )
        FROM findings AS f
        WHERE f.id = r.finding_id
        """
    )
    op.alter_column("recommendations", "change", nullable=False)
    for column in _OLD_RECOMMENDATION_COLUMNS:
        op.drop_column("recommendations", column)

    op.add_column(
        "patches",
        sa.Column(
            "change_sources",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
    )
    op.execute(
        """
        UPDATE patches AS p SET
            change_sources = COALESCE((
                SELECT jsonb_agg(to_jsonb(CASE
                    WHEN e.c -> 'finding' IS NULL OR jsonb_typeof(e.c -> 'finding') <> 'object' THEN ''
                    WHEN COALESCE(e.c -> 'finding' ->> 'dedup_key', '') = '' THEN e.c -> 'finding' ->> 'rule'
                    WHEN starts_with(e.c -> 'finding' ->> 'dedup_key', e.c -> 'finding' ->> 'rule')
                        THEN e.c -> 'finding' ->> 'dedup_key'
                    ELSE (e.c -> 'finding' ->> 'rule') || ' (' || (e.c -> 'finding' ->> 'dedup_key') || ')'
                END) ORDER BY e.n)
                FROM jsonb_array_elements(p.changes) WITH ORDINALITY AS e(c, n)
            ), '[]'::jsonb),
            changes = COALESCE((
                SELECT jsonb_agg(jsonb_build_object(
                    'target', e.c -> 'target',
                    'key', e.c -> 'key',
                    'entity', CASE
                        WHEN e.c ->> 'target' = 'tikv' AND e.c -> 'entity' ->> 'node' IS NOT NULL
                            THEN jsonb_strip_nulls(jsonb_build_object(
                                'kind', 'node',
                                'id', e.c -> 'entity' ->> 'node',
                                'status_address', e.c -> 'entity' ->> 'node',
                                'instance_id', e.c -> 'entity' ->> 'instance_id'))
                        WHEN e.c -> 'entity' ->> 'volume_id' IS NOT NULL
                            THEN jsonb_strip_nulls(jsonb_build_object(
                                'kind', 'volume',
                                'id', e.c -> 'entity' ->> 'volume_id',
                                'volume_id', e.c -> 'entity' ->> 'volume_id',
                                'instance_id', e.c -> 'entity' ->> 'instance_id',
                                'node', e.c -> 'entity' ->> 'node'))
                        WHEN e.c -> 'entity' ->> 'instance_id' IS NOT NULL
                            THEN jsonb_strip_nulls(jsonb_build_object(
                                'kind', 'instance',
                                'id', e.c -> 'entity' ->> 'instance_id',
                                'instance_id', e.c -> 'entity' ->> 'instance_id',
                                'node', e.c -> 'entity' ->> 'node'))
                        ELSE 'null'::jsonb
                    END,
                    'current', COALESCE(e.c -> 'current', 'null'::jsonb),
                    'proposed', COALESCE(e.c -> 'proposed', 'null'::jsonb),
                    'online', COALESCE(e.c -> 'online', 'null'::jsonb),
                    'reason', COALESCE(e.c -> 'reason', '""'::jsonb)
                ) ORDER BY e.n)
                FROM jsonb_array_elements(p.changes) WITH ORDINALITY AS e(c, n)
            ), '[]'::jsonb)
        """
    )


def downgrade() -> None:
    op.execute(
        """
        UPDATE patches AS p SET changes = COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                'target', e.c -> 'target',
                'key', e.c -> 'key',
                'current', e.c -> 'current',
                'proposed', e.c -> 'proposed',
                'online', e.c -> 'online',
                'reason', e.c -> 'reason',
                'finding', CASE WHEN COALESCE(p.change_sources ->> (e.n - 1)::int, '') = '' THEN 'null'::jsonb
                    ELSE jsonb_build_object(
                        'rule', split_part(p.change_sources ->> (e.n - 1)::int, '/', 1),
                        'dedup_key', p.change_sources ->> (e.n - 1)::int,
                        'title', '')
                END,
                'entity', jsonb_build_object(
                    'node', CASE WHEN e.c ->> 'target' = 'tikv' THEN COALESCE(
                            e.c -> 'entity' ->> 'status_address', e.c -> 'entity' ->> 'node',
                            CASE WHEN e.c -> 'entity' ->> 'kind' = 'node' THEN e.c -> 'entity' ->> 'id' END)
                        ELSE e.c -> 'entity' ->> 'node' END,
                    'store_address', NULL,
                    'volume_id', COALESCE(e.c -> 'entity' ->> 'volume_id',
                        CASE WHEN e.c -> 'entity' ->> 'kind' = 'volume' THEN e.c -> 'entity' ->> 'id' END),
                    'instance_id', COALESCE(e.c -> 'entity' ->> 'instance_id',
                        CASE WHEN e.c -> 'entity' ->> 'kind' = 'instance' THEN e.c -> 'entity' ->> 'id' END)
                )
            ) ORDER BY e.n)
            FROM jsonb_array_elements(p.changes) WITH ORDINALITY AS e(c, n)
        ), '[]'::jsonb)
        """
    )
    op.drop_column("patches", "change_sources")

    op.add_column(
        "recommendations",
        sa.Column(
            "target",
            sa.Enum(
                "tikv", "aws", name="change_target", native_enum=False, create_constraint=True, length=32
            ),
            nullable=True,
        ),
    )
    op.add_column("recommendations", sa.Column("key", sa.String(length=200), nullable=True))
    op.add_column("recommendations", sa.Column("entity", sa.String(length=255), nullable=True))
    op.add_column(
        "recommendations", sa.Column("current", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.add_column(
        "recommendations", sa.Column("proposed", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.add_column("recommendations", sa.Column("online", sa.Boolean(), nullable=True))
    op.add_column("recommendations", sa.Column("reason", sa.Text(), nullable=True))
    op.execute(
        """
        UPDATE recommendations SET
            target = change ->> 'target',
            key = change ->> 'key',
            entity = CASE WHEN change ->> 'target' = 'tikv' THEN COALESCE(
                    change -> 'entity' ->> 'status_address', change -> 'entity' ->> 'node',
                    CASE WHEN change -> 'entity' ->> 'kind' = 'node' THEN change -> 'entity' ->> 'id' END)
                ELSE COALESCE(
                    change -> 'entity' ->> 'volume_id',
                    CASE WHEN change -> 'entity' ->> 'kind' = 'volume' THEN change -> 'entity' ->> 'id' END,
                    change -> 'entity' ->> 'instance_id',
                    CASE WHEN change -> 'entity' ->> 'kind' = 'instance' THEN change -> 'entity' ->> 'id' END)
            END,
            current = NULLIF(change -> 'current', 'null'::jsonb),
            proposed = NULLIF(change -> 'proposed', 'null'::jsonb),
            online = COALESCE((change ->> 'online')::boolean, false),
            reason = COALESCE(change ->> 'reason', '')
        """
    )
    for column in ("target", "key", "online", "reason"):
        op.alter_column("recommendations", column, nullable=False)
    op.drop_column("recommendations", "change")
