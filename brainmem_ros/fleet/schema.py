"""The fleet database's schema: ordered migrations, roles and row-level security.

Run by an operator's (admin) connection, never by a robot: robots hold a role that
may write its own rows and read its fleet's shared rows, nothing else. The schema
records its version and vector dimension in ``fleet_meta``; a robot refuses a
database of another version or dimension.

Security model (docs/security.md): every robot logs in as ``brainmem_<robot_id>``,
member of the NOLOGIN group ``brainmem_robots``. Row-level security on every table:

- ``fleet_units``: read where ``fleet_id`` is the robot's fleet and the row is shared
  (or the robot's own); insert, update and delete only rows whose ``robot_id`` is the
  robot's own, in its own fleet.
- ``fleet_reinforcements``: read within the fleet; insert only as ``by_robot`` = self,
  only for units the robot can read.
- ``fleet_unshared``: read within the fleet; insert only rows whose ``robot_id`` is the
  robot's own. Ids only, no content: what a robot no longer shares is gone from the
  server, and this record tells the others to drop it from their caches.
"""

from __future__ import annotations

from typing import Any

from brainmem_ros.fleet.errors import FleetSchemaError

SCHEMA_VERSION = 5
GROUP_ROLE = 'brainmem_robots'

# Version 1: robots, their shared units (one row per robot and unit), RLS.
# {dim} is the embedding dimension, fixed for a fleet (all robots run the same encoder).
SCHEMA_V1 = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE fleet_robots (
  robot_id text PRIMARY KEY,
  fleet_id text NOT NULL,
  role name NOT NULL UNIQUE,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE fleet_units (
  robot_id text NOT NULL REFERENCES fleet_robots(robot_id),
  unit_id bigint NOT NULL,
  fleet_id text NOT NULL,
  version bigint NOT NULL,
  stamp double precision NOT NULL,
  type text NOT NULL,
  episode_id text NOT NULL DEFAULT '',
  source text NOT NULL DEFAULT '',
  text text NOT NULL,
  entity_names text NOT NULL DEFAULT '',
  entities jsonb NOT NULL DEFAULT '[]',
  state_changes jsonb NOT NULL DEFAULT '[]',
  outcome text NOT NULL DEFAULT 'unknown',
  importance real NOT NULL,
  strength real NOT NULL,
  valence real NOT NULL,
  pose jsonb,
  marginalized boolean NOT NULL DEFAULT false,
  shared boolean NOT NULL DEFAULT true,
  embedding vector({dim}) NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text || ' ' || entity_names)) STORED,
  shared_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (robot_id, unit_id)
);
CREATE INDEX fleet_units_embedding ON fleet_units USING hnsw (embedding vector_cosine_ops);
CREATE INDEX fleet_units_tsv ON fleet_units USING gin (tsv);
CREATE INDEX fleet_units_updated ON fleet_units (fleet_id, updated_at);
CREATE FUNCTION fleet_my_robot() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT robot_id FROM fleet_robots WHERE role = current_user $$;
CREATE FUNCTION fleet_my_fleet() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT fleet_id FROM fleet_robots WHERE role = current_user $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'brainmem_robots') THEN
    CREATE ROLE brainmem_robots NOLOGIN;
  END IF;
END $$;
GRANT USAGE ON SCHEMA public TO brainmem_robots;
GRANT SELECT ON fleet_meta, fleet_robots TO brainmem_robots;
GRANT SELECT, INSERT, UPDATE, DELETE ON fleet_units TO brainmem_robots;
ALTER TABLE fleet_units ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_units_read ON fleet_units FOR SELECT TO brainmem_robots
  USING (fleet_id = fleet_my_fleet() AND (shared OR robot_id = fleet_my_robot()));
CREATE POLICY fleet_units_insert ON fleet_units FOR INSERT TO brainmem_robots
  WITH CHECK (robot_id = fleet_my_robot() AND fleet_id = fleet_my_fleet());
CREATE POLICY fleet_units_update ON fleet_units FOR UPDATE TO brainmem_robots
  USING (robot_id = fleet_my_robot())
  WITH CHECK (robot_id = fleet_my_robot() AND fleet_id = fleet_my_fleet());
CREATE POLICY fleet_units_delete ON fleet_units FOR DELETE TO brainmem_robots
  USING (robot_id = fleet_my_robot());
"""

# Version 2: reinforcement of another robot's shared unit. The sender's (by_robot,
# local_seq) makes a resent reinforcement a no-op; the owner applies it to its own
# memory and shares the new strength back.
SCHEMA_V2_REINFORCEMENTS = """
CREATE TABLE fleet_reinforcements (
  id bigserial PRIMARY KEY,
  fleet_id text NOT NULL,
  robot_id text NOT NULL,
  unit_id bigint NOT NULL,
  by_robot text NOT NULL,
  local_seq bigint NOT NULL,
  reward real NOT NULL,
  note text NOT NULL DEFAULT '',
  stamp double precision NOT NULL,
  UNIQUE (by_robot, local_seq)
);
CREATE INDEX fleet_reinforcements_owner ON fleet_reinforcements (robot_id, id);
GRANT SELECT, INSERT ON fleet_reinforcements TO brainmem_robots;
GRANT USAGE ON SEQUENCE fleet_reinforcements_id_seq TO brainmem_robots;
ALTER TABLE fleet_reinforcements ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_reinforcements_read ON fleet_reinforcements FOR SELECT TO brainmem_robots
  USING (fleet_id = fleet_my_fleet());
CREATE POLICY fleet_reinforcements_insert ON fleet_reinforcements FOR INSERT TO brainmem_robots
  WITH CHECK (by_robot = fleet_my_robot() AND fleet_id = fleet_my_fleet() AND EXISTS (
    SELECT 1 FROM fleet_units u
    WHERE u.robot_id = fleet_reinforcements.robot_id AND u.unit_id = fleet_reinforcements.unit_id));
"""

# Version 3: the policies call fleet_my_robot() / fleet_my_fleet() through a scalar
# subquery, which PostgreSQL evaluates once per statement (an InitPlan) instead of
# once per row examined: a full-text match over 100k rows ran the lookup 100k times.
SCHEMA_V3_POLICY_INITPLANS = """
ALTER POLICY fleet_units_read ON fleet_units
  USING (fleet_id = (SELECT fleet_my_fleet()) AND (shared OR robot_id = (SELECT fleet_my_robot())));
ALTER POLICY fleet_units_insert ON fleet_units
  WITH CHECK (robot_id = (SELECT fleet_my_robot()) AND fleet_id = (SELECT fleet_my_fleet()));
ALTER POLICY fleet_units_update ON fleet_units
  USING (robot_id = (SELECT fleet_my_robot()))
  WITH CHECK (robot_id = (SELECT fleet_my_robot()) AND fleet_id = (SELECT fleet_my_fleet()));
ALTER POLICY fleet_units_delete ON fleet_units
  USING (robot_id = (SELECT fleet_my_robot()));
ALTER POLICY fleet_reinforcements_read ON fleet_reinforcements
  USING (fleet_id = (SELECT fleet_my_fleet()));
ALTER POLICY fleet_reinforcements_insert ON fleet_reinforcements
  WITH CHECK (by_robot = (SELECT fleet_my_robot()) AND fleet_id = (SELECT fleet_my_fleet()) AND EXISTS (
    SELECT 1 FROM fleet_units u
    WHERE u.robot_id = fleet_reinforcements.robot_id AND u.unit_id = fleet_reinforcements.unit_id));
"""

# Version 4: a record of each unit a robot stopped sharing (unshared or deleted), ids only.
# Subscribers read it after their cursor and drop those units from their caches; a row
# deleted from fleet_units would otherwise stay in every cache that received it.
SCHEMA_V4_UNSHARED = """
CREATE TABLE fleet_unshared (
  id bigserial PRIMARY KEY,
  fleet_id text NOT NULL,
  robot_id text NOT NULL,
  unit_id bigint NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fleet_unshared_fleet ON fleet_unshared (fleet_id, id);
GRANT SELECT, INSERT ON fleet_unshared TO brainmem_robots;
GRANT USAGE ON SEQUENCE fleet_unshared_id_seq TO brainmem_robots;
ALTER TABLE fleet_unshared ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_unshared_read ON fleet_unshared FOR SELECT TO brainmem_robots
  USING (fleet_id = (SELECT fleet_my_fleet()));
CREATE POLICY fleet_unshared_insert ON fleet_unshared FOR INSERT TO brainmem_robots
  WITH CHECK (robot_id = (SELECT fleet_my_robot()) AND fleet_id = (SELECT fleet_my_fleet()));
"""

# Version 5: when a later memory of the owner superseded a shared one (closed the facts
# it stated): fleet recall ranks it behind the current one, as local recall does.
SCHEMA_V5_SUPERSEDED = """
ALTER TABLE fleet_units ADD COLUMN superseded_at double precision;
"""

# Ordered: MIGRATIONS[v] takes a database at version v to v + 1.
MIGRATIONS: tuple[str, ...] = (SCHEMA_V1, SCHEMA_V2_REINFORCEMENTS, SCHEMA_V3_POLICY_INITPLANS,
                               SCHEMA_V4_UNSHARED, SCHEMA_V5_SUPERSEDED)
assert len(MIGRATIONS) == SCHEMA_VERSION

_META = 'CREATE TABLE IF NOT EXISTS fleet_meta (key text PRIMARY KEY, value text NOT NULL)'
# Any constant: serialises concurrent migrations of one database.
_MIGRATION_LOCK = 0x6272_6169_6E6D


def schema_version(conn: Any) -> int:
    """The version recorded in ``fleet_meta`` (0 for an empty database)."""
    row = conn.execute("SELECT to_regclass('fleet_meta') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    found = conn.execute("SELECT value FROM fleet_meta WHERE key = 'schema_version'").fetchone()
    return int(found[0]) if found else 0


def migrate(conn: Any, *, dim: int, target: int = SCHEMA_VERSION) -> int:
    """Bring the database to ``target`` in one transaction; returns the version before.

    ``conn`` is an admin psycopg connection (owner of the schema). A database at a
    newer version, or made for another vector dimension, is refused.
    """
    if not 0 < dim <= 16000:
        msg = f'vector dimension must be within 1..16000, got {dim}'
        raise FleetSchemaError(msg)
    with conn.transaction():
        conn.execute('SELECT pg_advisory_xact_lock(%s)', (_MIGRATION_LOCK,))
        conn.execute(_META)
        before = schema_version(conn)
        if before > SCHEMA_VERSION:
            msg = (f'the fleet database has schema version {before}, newer than this brainmem '
                   f'({SCHEMA_VERSION}): upgrade brainmem_ros')
            raise FleetSchemaError(msg)
        found = conn.execute("SELECT value FROM fleet_meta WHERE key = 'dim'").fetchone()
        if found is not None and int(found[0]) != dim:
            msg = f'the fleet database holds {found[0]}-d vectors, this robot embeds {dim}-d'
            raise FleetSchemaError(msg)
        for step in range(before, target):
            conn.execute(MIGRATIONS[step].replace('{dim}', str(int(dim))))
        if target > before:
            conn.execute("INSERT INTO fleet_meta VALUES ('schema_version', %s), ('dim', %s) "
                         'ON CONFLICT (key) DO UPDATE SET value = excluded.value',
                         (str(target), str(dim)))
    return before


def provision_robot(conn: Any, robot_id: str, *, fleet_id: str, password: str) -> str:
    """Create (or update) the role of one robot; returns the role name.

    An operator runs this once per robot and hands the password to that robot alone
    (its credentials file). The role can log in and nothing more than the group grants.
    """
    from psycopg import sql

    from brainmem_ros.fleet.config import FleetConfig, role_of

    FleetConfig(enabled=True, robot_id=robot_id, dsn='host=x')  # validates the id
    role = role_of(robot_id)
    with conn.transaction():
        exists = conn.execute('SELECT 1 FROM pg_roles WHERE rolname = %s', (role,)).fetchone()
        verb = 'ALTER' if exists else 'CREATE'
        conn.execute(sql.SQL('{} ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}').format(
            sql.SQL(verb), sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL('GRANT {} TO {}').format(sql.Identifier(GROUP_ROLE), sql.Identifier(role)))
        conn.execute('INSERT INTO fleet_robots (robot_id, fleet_id, role) VALUES (%s, %s, %s) '
                     'ON CONFLICT (robot_id) DO UPDATE SET fleet_id = excluded.fleet_id',
                     (robot_id, fleet_id, role))
    return role
