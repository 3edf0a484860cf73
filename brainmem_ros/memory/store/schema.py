"""The SQLite schema, written once, and the ordered migrations that reach it."""

from __future__ import annotations

SCHEMA_VERSION = 2

# Version 1. Vectors live in their own table so that scans of unit metadata never
# page 1.5 KB embeddings through the cache.
SCHEMA_V1 = """
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE units (
  id INTEGER PRIMARY KEY,
  stamp REAL NOT NULL,
  type TEXT NOT NULL,
  episode_id TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  entities TEXT NOT NULL DEFAULT '[]',
  entity_names TEXT NOT NULL DEFAULT '',
  actions TEXT NOT NULL DEFAULT '[]',
  state_changes TEXT NOT NULL DEFAULT '[]',
  outcome TEXT NOT NULL DEFAULT 'unknown',
  valence REAL NOT NULL DEFAULT 0,
  importance REAL NOT NULL DEFAULT 5,
  strength REAL NOT NULL DEFAULT 1,
  access_count INTEGER NOT NULL DEFAULT 0,
  folded_access INTEGER NOT NULL DEFAULT 0,
  last_access REAL NOT NULL,
  protected INTEGER NOT NULL DEFAULT 0,
  marginalized INTEGER NOT NULL DEFAULT 0,
  pose TEXT,
  pose_frame TEXT,
  pose_x REAL,
  pose_y REAL,
  valid_from REAL NOT NULL,
  valid_until REAL,
  repeats INTEGER NOT NULL DEFAULT 0,
  enrichment TEXT NOT NULL DEFAULT 'none',
  enrichment_note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX units_episode ON units(episode_id, stamp);
CREATE INDEX units_stamp ON units(stamp);
CREATE INDEX units_pending ON units(enrichment) WHERE enrichment IN ('pending', 'failed');
CREATE INDEX units_pose ON units(pose_frame, pose_x, pose_y) WHERE pose_frame IS NOT NULL;
CREATE TABLE vectors (
  unit_id INTEGER PRIMARY KEY REFERENCES units(id) ON DELETE CASCADE,
  vector BLOB NOT NULL
);
CREATE TABLE unit_entities (
  entity TEXT NOT NULL,
  unit_id INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
  PRIMARY KEY (entity, unit_id)
) WITHOUT ROWID;
CREATE INDEX unit_entities_unit ON unit_entities(unit_id);
CREATE TABLE edges (
  src INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
  dst INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  weight REAL NOT NULL,
  PRIMARY KEY (src, dst, kind)
) WITHOUT ROWID;
CREATE INDEX edges_dst ON edges(dst);
CREATE TABLE facts (
  entity TEXT NOT NULL,
  attribute TEXT NOT NULL,
  unit_id INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
  value TEXT NOT NULL,
  valid_from REAL NOT NULL,
  valid_until REAL,
  PRIMARY KEY (entity, attribute, unit_id)
) WITHOUT ROWID;
CREATE INDEX facts_open ON facts(entity, attribute) WHERE valid_until IS NULL;
CREATE TABLE reinforcements (
  id INTEGER PRIMARY KEY,
  stamp REAL NOT NULL,
  unit_ids TEXT NOT NULL,
  reward REAL NOT NULL,
  note TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE units_fts USING fts5(
  text, entity_names, content='units', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
  INSERT INTO units_fts(rowid, text, entity_names) VALUES (new.id, new.text, new.entity_names);
END;
CREATE TRIGGER units_fts_delete AFTER DELETE ON units BEGIN
  INSERT INTO units_fts(units_fts, rowid, text, entity_names)
  VALUES ('delete', old.id, old.text, old.entity_names);
END;
CREATE TRIGGER units_fts_update AFTER UPDATE OF text, entity_names ON units BEGIN
  INSERT INTO units_fts(units_fts, rowid, text, entity_names)
  VALUES ('delete', old.id, old.text, old.entity_names);
  INSERT INTO units_fts(rowid, text, entity_names) VALUES (new.id, new.text, new.entity_names);
END;
"""

# Version 2: facts are timelines per entity and attribute, derived from the claims each
# unit makes (brainmem_ros.memory.fact_store), instead of one row per unit that closed
# the unit itself. Observations are never invalidated any more: the units' valid_until
# that version 1 set is cleared, and the facts of a store that has units are derived again
# from them when it is next opened (meta facts_rebuild), so nothing a unit said is lost.
SCHEMA_V2_FACTS = """
DROP INDEX IF EXISTS facts_open;
DROP TABLE facts;
CREATE TABLE facts (
  id INTEGER PRIMARY KEY,
  entity TEXT NOT NULL,
  head TEXT NOT NULL,
  name TEXT NOT NULL,
  attribute TEXT NOT NULL,
  value TEXT NOT NULL,
  valid_from REAL NOT NULL,
  valid_until REAL,
  last_seen REAL NOT NULL,
  pose TEXT,
  source TEXT NOT NULL,
  confidence REAL NOT NULL
);
CREATE INDEX facts_timeline ON facts(entity, attribute, valid_from);
CREATE INDEX facts_head ON facts(head);
CREATE INDEX facts_open ON facts(attribute, last_seen) WHERE valid_until IS NULL;
CREATE TABLE fact_claims (
  entity TEXT NOT NULL,
  attribute TEXT NOT NULL,
  unit_id INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
  stamp REAL NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  source TEXT NOT NULL,
  confidence REAL NOT NULL,
  pose TEXT,
  fact_id INTEGER,
  PRIMARY KEY (entity, attribute, stamp, unit_id)
) WITHOUT ROWID;
CREATE INDEX fact_claims_unit ON fact_claims(unit_id);
CREATE INDEX fact_claims_fact ON fact_claims(fact_id);
UPDATE units SET valid_until = NULL WHERE valid_until IS NOT NULL;
INSERT INTO meta(key, value) SELECT 'facts_rebuild', '1' WHERE EXISTS (SELECT 1 FROM units)
  ON CONFLICT(key) DO UPDATE SET value = excluded.value;
"""

# Ordered: MIGRATIONS[v] takes a database at version v to v + 1. Version 0 is empty.
MIGRATIONS: tuple[str, ...] = (SCHEMA_V1, SCHEMA_V2_FACTS)
assert len(MIGRATIONS) == SCHEMA_VERSION
