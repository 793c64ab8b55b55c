"""Copy one seeded tenant N times inside PostgreSQL, for load tests of many tenants (bench/load_test.py).

Seeding a demo tenant the product's way (sign-up, the demo cluster, its 7-day backfill, rollups, first advice
and projections) costs about 5 s of CPU; 1,000 of them would take most of an hour on 2 cores. A copy made by
`INSERT ... SELECT` costs a fraction of that and is the same tenant: every row of every table the organisation
owns (its user and membership, the cluster, the inventory, the series with their points and rollups, the
ingest watermarks, findings, recommendations, projections, the demo source and its sweeps) with new ids, so
each copy goes on ingesting, being advised and being browsed on its own from where the original stopped.

How ids are given:
- every uuid `id` of the tenant's rows gets a new uuid per copy (table `clone_uuid`), and every uuid column and
  every text or JSON column holding one of the tenant's uuids (the audit log's targets, the burst forecasts'
  keys) is mapped through it;
- every series gets a new id (table `clone_series`), and the points, rollups, rollup queue and watermarks follow;
- other bigint identities (the audit log, sweeps, watermarks) are left to their sequences;
- what must be unique across the database is rewritten: the user's e-mail, the organisation's name, slug and
  external id (and the demo source's external id, which is the organisation's), the cluster's name.

`check_copies` then looks for any copied row that still names a uuid or series of the original: none may.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import defaultdict
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection

# Tenant tables whose rows are per-session or per-delivery state (sign-in sessions, tokens, invitations, e-mail
# and alert deliveries): a copy starts without them, as a tenant nobody has signed in to yet.
SKIPPED = ("user_sessions", "api_tokens", "invitations", "digest_sends", "digest_deliveries", "alert_deliveries")
SERIES_COLUMNS = {"metric_points", "metric_rollups", "metric_rollup_dirty", "ingest_watermarks"}
UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# Each copy's unique values, from its index `k` and its new ids (`m_id`: the row's new id).
EMAIL = "format('load-%s-%s@example.com', lpad(c.k::text, 4, '0'), left(md5({user}::text), 6))"
OVERRIDES: dict[tuple[str, str], str] = {
    ("users", "email"): EMAIL.format(user="m_id.new"),
    ("email_verifications", "email"): EMAIL.format(user="m_user_id.new"),
    ("organizations", "name"): "format('Load %s', c.k)",
    ("organizations", "slug"): "format('load-%s-%s', c.k, left(md5(m_id.new::text), 6))",
    ("organizations", "aws_external_id"): "'headroom-' || md5(m_id.new::text)",
    ("aws_connections", "external_id"): "'headroom-' || md5(m_org_id.new::text)",
    ("clusters", "name"): "format('load-%s', lpad(c.k::text, 4, '0'))",
}

REMAP_FUNCTION = f"""
CREATE OR REPLACE FUNCTION pg_temp.clone_remap(kk integer, t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE u text; n uuid;
BEGIN
  IF t IS NULL THEN RETURN NULL; END IF;
  FOR u IN SELECT DISTINCT m[1] FROM regexp_matches(t, '({UUID_PATTERN})', 'g') AS m LOOP
    SELECT new INTO n FROM clone_uuid WHERE k = kk AND old = u::uuid;
    IF FOUND THEN t := replace(t, u, n::text); END IF;
  END LOOP;
  RETURN t;
END $$
"""


def _tables(conn: Connection) -> dict[str, list[tuple[str, str]]]:
    """Every ordinary (not partition) table of the schema: name -> [(column, type)] in column order."""
    rows = conn.execute(text(
        "SELECT c.table_name, c.column_name, c.data_type, c.udt_name FROM information_schema.columns c "
        "JOIN pg_class r ON r.relname = c.table_name AND r.relnamespace = 'public'::regnamespace "
        "WHERE c.table_schema = 'public' AND NOT r.relispartition AND r.relkind IN ('r', 'p') "
        "ORDER BY c.table_name, c.ordinal_position"))
    tables: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for table, column, data_type, udt in rows:
        tables[table].append((column, udt if data_type in ("ARRAY", "USER-DEFINED") else data_type))
    return dict(tables)


def _dependency_order(conn: Connection, names: set[str]) -> list[str]:
    """`names` ordered so that a table comes after every table its foreign keys point to."""
    edges = defaultdict(set)
    for child, parent in conn.execute(text(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint WHERE contype = 'f'")):
        if child in names and parent in names and child != parent:
            edges[child].add(parent)
    ordered: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for parent in sorted(edges[name]):
            visit(parent)
        ordered.append(name)

    for name in sorted(names):
        visit(name)
    return ordered


def _owned(table: str) -> str:
    """The WHERE clause selecting the original tenant's rows of `table` (`:org` its organisation)."""
    if table == "organizations":
        return "t.id = :org"
    if table == "users":
        return "t.id IN (SELECT user_id FROM memberships WHERE org_id = :org)"
    if table == "email_verifications":
        return "t.user_id IN (SELECT user_id FROM memberships WHERE org_id = :org)"
    return "t.org_id = :org"


class Cloner:
    """Copies of the tenant of organisation `org_id`, made batch by batch (`copy`)."""

    def __init__(self, database_url: str, org_id: uuid.UUID) -> None:
        from headroom.platform.db import normalise_database_url

        self.engine = create_engine(normalise_database_url(database_url))
        self.org = org_id
        with self.engine.connect() as conn:
            columns = _tables(conn)
            tenant = {t for t, cols in columns.items() if any(c == "org_id" for c, _ in cols)}
            tenant |= {"organizations", "users", "email_verifications"}
            self.present: dict[str, int] = {}
            for table in sorted(tenant):
                n = conn.execute(text(f"SELECT count(*) FROM {table} t WHERE {_owned(table)}"),
                                 {"org": org_id}).scalar_one()
                if n:
                    self.present[table] = int(n)
            self.order = [t for t in _dependency_order(conn, set(self.present)) if t not in SKIPPED]
            self.columns = {t: columns[t] for t in self.order}
            self.remapped = self._text_columns_with_ids(conn)
            conn.execute(text("CREATE TABLE IF NOT EXISTS clone_uuid (k integer, old uuid, new uuid, "
                              "PRIMARY KEY (k, old))"))
            conn.execute(text("CREATE TABLE IF NOT EXISTS clone_series (k integer, old bigint, new bigint, "
                              "PRIMARY KEY (k, old))"))
            conn.commit()

    def _text_columns_with_ids(self, conn: Connection) -> set[tuple[str, str]]:
        """The text, varchar and JSON columns whose original rows hold one of the tenant's uuids."""
        ids = self._original_ids(conn)
        found: set[tuple[str, str]] = set()
        for table in self.order:
            for column, kind in self.columns[table]:
                if (table, column) in OVERRIDES or kind not in ("text", "character varying", "jsonb", "json"):
                    continue
                values = conn.execute(text(f"SELECT t.{column}::text FROM {table} t WHERE {_owned(table)} "
                                           f"AND t.{column}::text ~ '{UUID_PATTERN}'"), {"org": self.org}).scalars()
                if any(set(re.findall(UUID_PATTERN, v or "")) & ids for v in values):
                    found.add((table, column))
        return found

    def _original_ids(self, conn: Connection) -> set[str]:
        ids: set[str] = set()
        for table in self.order:
            if ("id", "uuid") in self.columns[table]:
                ids |= {str(v) for v in conn.execute(text(f"SELECT t.id FROM {table} t WHERE {_owned(table)}"),
                                                     {"org": self.org}).scalars()}
        return ids

    def _select(self, table: str) -> tuple[str, str]:
        """The column list and the SELECT that copies `table`'s original rows for every copy in `clone_batch`."""
        cols, exprs, joins = [], [], []
        for column, kind in self.columns[table]:
            if column == "id" and kind == "bigint" and table != "metric_series":
                continue  # an identity: the copy takes the sequence's next value
            cols.append(f'"{column}"')
            if (table, column) in OVERRIDES:
                exprs.append(OVERRIDES[(table, column)])
            elif kind == "uuid":
                exprs.append(f"COALESCE(m_{column}.new, t.{column})")
            elif kind == "_uuid":
                exprs.append(f"ARRAY(SELECT COALESCE((SELECT new FROM clone_uuid WHERE k = c.k AND old = x), x) "
                             f"FROM unnest(t.{column}) AS x)")
            elif (table == "metric_series" and column == "id") or (table in SERIES_COLUMNS and column == "series_id"):
                exprs.append("s.new")
            elif (table, column) in self.remapped:
                cast = "::jsonb" if kind == "jsonb" else "::json" if kind == "json" else ""
                exprs.append(f"pg_temp.clone_remap(c.k, t.{column}::text){cast}")
            else:
                exprs.append(f"t.{column}")
        for column, kind in self.columns[table]:
            if kind == "uuid":
                joins.append(f"LEFT JOIN clone_uuid m_{column} ON m_{column}.k = c.k AND m_{column}.old = t.{column}")
        if table == "metric_series":
            joins.append("JOIN clone_series s ON s.k = c.k AND s.old = t.id")
        elif table in SERIES_COLUMNS:
            joins.append("JOIN clone_series s ON s.k = c.k AND s.old = t.series_id")
        select = (f"SELECT {', '.join(exprs)} FROM {table} t CROSS JOIN clone_batch c {' '.join(joins)} "
                  f"WHERE {_owned(table)}")
        return ", ".join(cols), select

    def copy(self, first: int, count: int) -> dict[str, Any]:
        """Make copies number first .. first+count-1 in one transaction; return their accounts and the time taken."""
        started = time.perf_counter()
        seconds: dict[str, float] = {}
        with self.engine.begin() as conn:
            conn.execute(text(REMAP_FUNCTION))
            conn.execute(text("CREATE TEMP TABLE clone_batch (k integer PRIMARY KEY) ON COMMIT DROP"))
            conn.execute(text("INSERT INTO clone_batch SELECT generate_series(CAST(:a AS integer), CAST(:b AS integer))"),
                         {"a": first, "b": first + count - 1})
            for table in self.order:
                if ("id", "uuid") in self.columns[table]:
                    conn.execute(text(f"INSERT INTO clone_uuid SELECT c.k, t.id, gen_random_uuid() FROM {table} t "
                                      f"CROSS JOIN clone_batch c WHERE {_owned(table)}"), {"org": self.org})
            conn.execute(text("INSERT INTO clone_series SELECT c.k, t.id, "
                              "nextval(pg_get_serial_sequence('metric_series', 'id')) FROM metric_series t "
                              "CROSS JOIN clone_batch c WHERE t.org_id = :org"), {"org": self.org})
            for table in self.order:
                t = time.perf_counter()
                cols, select = self._select(table)
                if table == "metric_series":  # an identity column: the copy's ids were drawn from its sequence
                    conn.execute(text(f"INSERT INTO {table} ({cols}) OVERRIDING SYSTEM VALUE {select}"),
                                 {"org": self.org})
                else:
                    conn.execute(text(f"INSERT INTO {table} ({cols}) {select}"), {"org": self.org})
                seconds[table] = seconds.get(table, 0.0) + time.perf_counter() - t
            accounts = conn.execute(text(
                "SELECT c.k, u.email, cl.id FROM clone_batch c "
                "JOIN clone_uuid mo ON mo.k = c.k AND mo.old = :org "
                "JOIN memberships m ON m.org_id = mo.new JOIN users u ON u.id = m.user_id "
                "JOIN clusters cl ON cl.org_id = mo.new ORDER BY c.k"), {"org": self.org}).all()
        return {"accounts": [{"index": k, "email": e, "cluster_id": str(c)} for k, e, c in accounts],
                "seconds": round(time.perf_counter() - started, 2),
                "slowest_tables": {t: round(s, 2) for t, s in sorted(seconds.items(), key=lambda x: -x[1])[:4]}}

    def check_copies(self, copies: list[int] | None = None) -> dict[str, int]:
        """Rows of the copies (numbers `copies`, or all) that still name the original's ids (uuids in any column,
        series ids), and points, rollups or watermarks whose series is another organisation's: all must be 0."""
        found: dict[str, int] = {}
        which = "" if copies is None else " AND k = ANY(:ks)"
        params = {"org": self.org, "ks": copies}
        with self.engine.connect() as conn:
            conn.execute(text("CREATE TEMP TABLE clone_old AS SELECT DISTINCT old FROM clone_uuid"))
            conn.execute(text(f"CREATE TEMP TABLE clone_new AS SELECT new FROM clone_uuid WHERE TRUE{which}"),
                         params)
            conn.execute(text(f"CREATE TEMP TABLE clone_orgs AS SELECT new FROM clone_uuid WHERE old = :org{which}"),
                         params)
            conn.execute(text("ANALYZE clone_old; ANALYZE clone_new; ANALYZE clone_orgs"))
            for table in self.order:
                conds = []
                for column, kind in self.columns[table]:
                    if kind == "uuid":
                        conds.append(f"t.{column} IN (SELECT old FROM clone_old)")
                    elif kind == "_uuid":
                        conds.append(f"t.{column} && ARRAY(SELECT old FROM clone_old)")
                    elif (table, column) in self.remapped:
                        conds.append(f"EXISTS (SELECT 1 FROM regexp_matches(t.{column}::text, '{UUID_PATTERN}', "
                                     "'g') AS m WHERE m[1]::uuid IN (SELECT old FROM clone_old))")
                    if column == "series_id":
                        conds.append("t.series_id IN (SELECT id FROM metric_series WHERE org_id = :org)")
                if not conds:
                    continue
                mine = ("t.id IN (SELECT new FROM clone_new)" if table in ("organizations", "users") else
                        "t.user_id IN (SELECT new FROM clone_new)" if table == "email_verifications" else
                        "t.org_id IN (SELECT new FROM clone_orgs)")
                found[table] = int(conn.execute(text(f"SELECT count(*) FROM {table} t WHERE {mine} AND "
                                                     f"({' OR '.join(conds)})"), params).scalar_one())
            # no copy reads another organisation's series: each point, rollup and watermark is its series' org's
            for table in sorted(SERIES_COLUMNS & set(self.order)):
                found[f"{table} of another org's series"] = int(conn.execute(text(
                    f"SELECT count(*) FROM {table} t JOIN metric_series s ON s.id = t.series_id "
                    "WHERE s.org_id <> t.org_id AND t.org_id IN (SELECT new FROM clone_orgs)"), params).scalar_one())
            conn.rollback()
        return found
