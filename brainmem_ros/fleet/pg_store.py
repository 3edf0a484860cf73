"""The fleet server's SQL: upserts of shared units, reinforcements, fleet recall.

All statements of the fleet tier against PostgreSQL live here, over a psycopg 3
connection pool. A server that cannot be reached raises
:class:`FleetUnavailableError` within about ``connect_timeout_s``; a statement the
server refuses (row-level security, grants) raises :class:`FleetDeniedError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from brainmem_ros.fleet.errors import FleetDeniedError, FleetError, FleetSchemaError, FleetUnavailableError
from brainmem_ros.fleet.schema import SCHEMA_VERSION, schema_version
from brainmem_ros.fleet.values import FleetHit, FleetRow, RecallFilter, Reinforcement

# The value objects moved to fleet.values; importers of this module keep them.
__all__ = ['FleetClient', 'FleetHit', 'FleetRow', 'RecallFilter', 'Reinforcement', 'and_query', 'or_query',
           'pose_json', 'vector_literal']

_WORD = re.compile(r'[^\W_]+', re.UNICODE)
# Most full-text matches ranked per list (rows matching every word, rows matching any).
_TEXT_CAP = 500
_UNIT_COLUMNS = ('robot_id, unit_id, stamp, type, episode_id, source, text, entities, state_changes, '
                 'outcome, importance, strength, valence, pose, marginalized, '
                 'extract(epoch FROM updated_at)')


def vector_literal(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form (no extra client dependency)."""
    return '[' + ','.join(f'{v:.6g}' for v in np.asarray(vector, dtype=np.float32).tolist()) + ']'


def or_query(text: str) -> str:
    """A tsquery matching any word of ``text`` (BM25-like recall: no word is required)."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    return ' | '.join(words)


def and_query(text: str) -> str:
    """A tsquery matching rows that hold every word of ``text`` (stop words are dropped)."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    return ' & '.join(words)


class FleetClient:
    """A robot's connection pool to the fleet database, logged in as its own role."""

    def __init__(self, conninfo: str, *, user: str, password: str, robot_id: str,
                 connect_timeout_s: float = 2.0, statement_timeout_ms: int = 2000,
                 ssl: dict[str, str] | None = None, max_size: int = 3) -> None:
        self.robot_id = robot_id
        self.connect_timeout_s = connect_timeout_s
        kwargs: dict[str, Any] = {
            'user': user, 'password': password, 'connect_timeout': max(1, round(connect_timeout_s)),
            'options': f'-c statement_timeout={int(statement_timeout_ms)}',
            'application_name': f'brainmem/{robot_id}',
        }
        kwargs.update({k: v for k, v in (ssl or {}).items() if v})
        # min_size 0: no background reconnect storm while the server is down; a
        # connection is made when one is needed and checked before it is lent.
        self._pool = ConnectionPool(conninfo, min_size=0, max_size=max_size, kwargs=kwargs,
                                    open=False, check=ConnectionPool.check_connection,
                                    timeout=connect_timeout_s + 0.5, name=f'fleet-{robot_id}')
        self._pool.open(wait=False)

    def close(self) -> None:
        """Close every connection."""
        self._pool.close(timeout=2.0)

    def __enter__(self) -> FleetClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout:
            msg = f'fleet server unreachable (no connection within {self.connect_timeout_s:.1f} s)'
            raise FleetUnavailableError(msg) from None
        except psycopg.errors.InsufficientPrivilege as exc:
            msg = f'fleet server refused: {exc}'.strip()
            raise FleetDeniedError(msg) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            msg = f'fleet server unreachable: {str(exc).strip() or type(exc).__name__}'
            raise FleetUnavailableError(msg) from None
        except psycopg.Error as exc:
            # Any other refusal of the server (a standby that is read-only after a
            # failover, a database without our functions, a constraint): the sync thread
            # handles fleet errors, and an untranslated one used to end it for good.
            msg = f'fleet server error: {type(exc).__name__}: {str(exc).strip()}'
            raise FleetError(msg) from None

    # -- checks ----------------------------------------------------------------------

    def check_schema(self, *, dim: int) -> None:
        """Refuse a database without our schema version or with another vector size."""
        with self._conn() as conn:
            version = schema_version(conn)
            found = conn.execute("SELECT value FROM fleet_meta WHERE key = 'dim'").fetchone() \
                if version else None
        if version != SCHEMA_VERSION:
            msg = (f'the fleet database has schema version {version}, this robot needs '
                   f'{SCHEMA_VERSION}: an operator runs the migration (docs/fleet.md)')
            raise FleetSchemaError(msg)
        if found is None or int(found[0]) != dim:
            msg = f'the fleet database holds {found[0] if found else "?"}-d vectors, this robot {dim}-d'
            raise FleetSchemaError(msg)

    # -- writes ----------------------------------------------------------------------

    def upsert_units(self, rows: Sequence[FleetRow], *, fleet_id: str) -> int:
        """Insert or update rows in one transaction; older versions never overwrite newer.

        Keyed by (robot_id, unit_id): sending a row twice (a replay after a crash)
        changes nothing. Returns the number of rows written or already current.
        """
        if not rows:
            return 0
        sql = (
            'INSERT INTO fleet_units (robot_id, unit_id, fleet_id, version, stamp, type, episode_id, '
            'source, text, entity_names, entities, state_changes, outcome, importance, strength, '
            'valence, pose, marginalized, embedding, superseded_at) VALUES (%s, %s, %s, %s, %s, %s, %s, '
            '%s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s, %s::jsonb, %s, %s::vector, %s) '
            'ON CONFLICT (robot_id, unit_id) DO UPDATE SET version = excluded.version, '
            'stamp = excluded.stamp, type = excluded.type, episode_id = excluded.episode_id, '
            'source = excluded.source, text = excluded.text, entity_names = excluded.entity_names, '
            'entities = excluded.entities, state_changes = excluded.state_changes, '
            'outcome = excluded.outcome, importance = excluded.importance, '
            'strength = excluded.strength, valence = excluded.valence, pose = excluded.pose, '
            'marginalized = excluded.marginalized, embedding = excluded.embedding, '
            'superseded_at = excluded.superseded_at, shared = true, '
            'updated_at = now() WHERE fleet_units.version < excluded.version')
        params = [(self.robot_id, r.unit_id, fleet_id, r.version, r.stamp, r.type, r.episode_id,
                   r.source, r.text, r.entity_names, r.entities, r.state_changes, r.outcome,
                   r.importance, r.strength, r.valence, r.pose, r.marginalized,
                   vector_literal(r.vector), r.superseded_at) for r in rows]
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(sql, params)
        return len(rows)

    def unshare_units(self, unit_ids: Sequence[int], *, fleet_id: str) -> int:
        """Remove this robot's rows (a unit deleted or no longer shared), and record it.

        The record (``fleet_unshared``, ids only) lets the other robots drop the units
        from their caches; one transaction, so a replay after a crash records nothing
        twice (the rows are gone the second time). Returns the number of rows removed.
        """
        if not unit_ids:
            return 0
        with self._conn() as conn, conn.transaction():
            gone = [int(r[0]) for r in conn.execute(
                'DELETE FROM fleet_units WHERE robot_id = %s AND unit_id = ANY(%s) RETURNING unit_id',
                (self.robot_id, list(unit_ids))).fetchall()]
            if gone:
                with conn.cursor() as cur:
                    cur.executemany('INSERT INTO fleet_unshared (fleet_id, robot_id, unit_id) '
                                    'VALUES (%s, %s, %s)', [(fleet_id, self.robot_id, uid) for uid in gone])
            return len(gone)

    def unshared_after(self, after_id: int | None, *, fleet_id: str, limit: int
                       ) -> list[tuple[int, str, int]]:
        """Other robots' units unshared after a record id: (record id, robot id, unit id), oldest first.

        ``after_id`` None (a robot's first poll: nothing cached before it to drop) gives
        no record, only where the next poll starts: ``[(newest id or 0, '', -1)]``. A
        unit shared again since its record is left out (its row is back, newer).
        """
        with self._conn() as conn:
            if after_id is None:
                row = conn.execute('SELECT coalesce(max(id), 0) FROM fleet_unshared WHERE fleet_id = %s',
                                   (fleet_id,)).fetchone()
                return [(int(row[0]) if row else 0, '', -1)]
            return [(int(r[0]), str(r[1]), int(r[2])) for r in conn.execute(
                'SELECT t.id, t.robot_id, t.unit_id FROM fleet_unshared t WHERE t.fleet_id = %s '
                'AND t.robot_id <> %s AND t.id > %s AND NOT EXISTS (SELECT 1 FROM fleet_units u '
                'WHERE u.robot_id = t.robot_id AND u.unit_id = t.unit_id AND u.shared) '
                'ORDER BY t.id LIMIT %s', (fleet_id, self.robot_id, after_id, limit)).fetchall()]

    def send_reinforcements(self, items: Sequence[tuple[int, Reinforcement]], *, fleet_id: str) -> int:
        """Insert (local_seq, reinforcement) pairs; a resent pair is a no-op."""
        if not items:
            return 0
        sql = ('INSERT INTO fleet_reinforcements (fleet_id, robot_id, unit_id, by_robot, local_seq, '
               'reward, note, stamp) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) '
               'ON CONFLICT (by_robot, local_seq) DO NOTHING')
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(sql, [(fleet_id, r.robot_id, r.unit_id, self.robot_id, seq, r.reward,
                                   r.note, r.stamp) for seq, r in items])
        return len(items)

    # -- reads -----------------------------------------------------------------------

    def reinforcements_for_me(self, *, after_id: int, limit: int) -> list[Reinforcement]:
        """Rewards other robots gave to this robot's units, oldest first."""
        with self._conn() as conn:
            rows = conn.execute(
                'SELECT id, robot_id, unit_id, by_robot, reward, note, stamp FROM fleet_reinforcements '
                'WHERE robot_id = %s AND id > %s ORDER BY id LIMIT %s',
                (self.robot_id, after_id, limit)).fetchall()
        return [Reinforcement(int(i), r, int(u), b, float(w), n, float(s)) for i, r, u, b, w, n, s in rows]

    def recall(self, vector: npt.NDArray[np.float32], text: str, *, limit: int,
               recall_filter: RecallFilter) -> list[FleetHit]:
        """Other robots' shared units nearest to ``vector`` (HNSW) or matching ``text``.

        Two candidate lists, as in local recall: approximate nearest neighbours by
        cosine, and full-text matches ranked by ``ts_rank_cd``; each hit carries both
        its cosine and its text rank, fused by :mod:`brainmem_ros.fleet.fusion`.
        """
        conds = ['robot_id <> %(me)s', 'type = ANY(%(types)s)']
        params: dict[str, Any] = {'me': self.robot_id, 'types': list(recall_filter.types),
                                  'vec': vector_literal(vector), 'limit': limit}
        if not recall_filter.include_marginalized:
            conds.append('NOT marginalized')
        if recall_filter.since is not None:
            conds.append('stamp >= %(since)s')
            params['since'] = recall_filter.since
        if recall_filter.until is not None:
            conds.append('stamp <= %(until)s')
            params['until'] = recall_filter.until
        where = ' AND '.join(conds)
        hits: dict[tuple[str, int], FleetHit] = {}
        with self._conn() as conn, conn.transaction():
            # ef_search bounds the candidates HNSW visits; it must cover the list asked for.
            conn.execute(f'SET LOCAL hnsw.ef_search = {max(40, int(limit))}')
            query = or_query(text)
            # The neighbours keep the words they share with the query (their text rank),
            # as local vector candidates keep their BM25: found by meaning, matched by words.
            params['q'] = query
            rank = "ts_rank_cd(tsv, to_tsquery('english', %(q)s))" if query else '0.0'
            rows = conn.execute(
                f'SELECT {_UNIT_COLUMNS}, 1 - (embedding <=> %(vec)s::vector), {rank}, superseded_at '
                'FROM fleet_units '
                f'WHERE {where} ORDER BY embedding <=> %(vec)s::vector LIMIT %(limit)s', params).fetchall()
            if query:
                # Ranking every any-word match is what made recall slow at scale (the
                # words of a fleet's texts repeat): rank at most ``cap`` rows matching
                # every query word plus ``cap`` matching any, both found by the GIN
                # index, then keep the best ``limit`` by ts_rank_cd over the any-word query.
                params |= {'q': query, 'qall': and_query(text), 'cap': max(_TEXT_CAP, 4 * int(limit))}
                rows += conn.execute(
                    f"WITH q AS (SELECT to_tsquery('english', %(q)s) AS o, "
                    f"to_tsquery('english', %(qall)s) AS a), "
                    f'cand AS ((SELECT robot_id, unit_id FROM fleet_units, q WHERE tsv @@ q.a AND {where} '
                    f'LIMIT %(cap)s) UNION (SELECT robot_id, unit_id FROM fleet_units, q '
                    f'WHERE tsv @@ q.o AND {where} LIMIT %(cap)s)) '
                    f'SELECT {_UNIT_COLUMNS}, 1 - (embedding <=> %(vec)s::vector), ts_rank_cd(tsv, q.o), '
                    'superseded_at '
                    'FROM fleet_units JOIN cand USING (robot_id, unit_id), q '
                    'ORDER BY ts_rank_cd(tsv, q.o) DESC LIMIT %(limit)s', params).fetchall()
        for row in rows:
            hit = FleetHit(str(row[0]), int(row[1]), float(row[2]), str(row[3]), str(row[4]), str(row[5]),
                           str(row[6]), row[7], row[8], str(row[9]), float(row[10]), float(row[11]),
                           float(row[12]), row[13], bool(row[14]), float(row[15]), float(row[16]),
                           float(row[17]), None if row[18] is None else float(row[18]))
            key = (hit.robot_id, hit.unit_id)
            if key not in hits or hit.lexical > hits[key].lexical:
                hits[key] = hit
        return list(hits.values())

    def changes_after(self, after: tuple[str, str, int] | None, *, fleet_id: str, limit: int,
                      lookback_s: float, newest: int) -> list[tuple[Any, ...]]:
        """Other robots' shared rows changed after a key (the subscription's poll).

        ``after`` is the (``updated_at`` as text, robot id, unit id) of the last row
        received; ``None`` for a robot's first poll, which starts at the
        ``newest``-th most recent row (the cache holds no more). ``lookback_s``
        moves the key back in time: the first page of each poll re-reads a few
        seconds, so a transaction that committed late with an older ``updated_at``
        is not missed (receiving a row again is harmless). Returns rows, oldest
        first: the recall columns, ``entity_names``, the vector as pgvector text,
        and ``updated_at`` as text (the next key).
        """
        params: dict[str, Any] = {'me': self.robot_id, 'fleet': fleet_id, 'limit': limit,
                                  'back': f'{float(lookback_s)} seconds'}
        with self._conn() as conn:
            if after is None:
                found = conn.execute(
                    'SELECT updated_at::text FROM fleet_units WHERE fleet_id = %(fleet)s '
                    'AND robot_id <> %(me)s ORDER BY updated_at DESC OFFSET %(skip)s LIMIT 1',
                    {**params, 'skip': max(0, newest - 1)}).fetchone()
                after = (str(found[0]) if found else '-infinity', '', -1)
                params['back'] = '0 seconds'
            params |= {'ts': after[0], 'rid': after[1], 'uid': after[2]}
            return [tuple(r) for r in conn.execute(
                f'SELECT {_UNIT_COLUMNS}, entity_names, embedding::text, superseded_at, updated_at::text '
                'FROM fleet_units '
                'WHERE fleet_id = %(fleet)s AND robot_id <> %(me)s AND shared AND (updated_at, robot_id, '
                'unit_id) > (%(ts)s::timestamptz - %(back)s::interval, %(rid)s, %(uid)s) '
                'ORDER BY updated_at, robot_id, unit_id LIMIT %(limit)s', params).fetchall()]

    def shared_count(self, *, robot_id: str | None = None) -> int:
        """Rows this role can read (one robot's, or the fleet's)."""
        with self._conn() as conn:
            if robot_id is None:
                row = conn.execute('SELECT count(*) FROM fleet_units').fetchone()
            else:
                row = conn.execute('SELECT count(*) FROM fleet_units WHERE robot_id = %s',
                                   (robot_id,)).fetchone()
        return int(row[0]) if row else 0

    def unit_strength(self, robot_id: str, unit_id: int) -> float | None:
        """The strength the fleet sees for one unit (None when not shared)."""
        with self._conn() as conn:
            row = conn.execute('SELECT strength FROM fleet_units WHERE robot_id = %s AND unit_id = %s',
                               (robot_id, unit_id)).fetchone()
        return float(row[0]) if row else None

    def my_fleet_id(self) -> str:
        """The fleet this robot's role belongs to ('' when the role is not provisioned)."""
        rows = self.execute('SELECT fleet_my_fleet()')
        return str(rows[0][0]) if rows and rows[0][0] else ''

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement as this robot's role (tests of the security model)."""
        with self._conn() as conn, conn.transaction():
            cur = conn.execute(sql, params)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description else []


def pose_json(pose: Any) -> str | None:
    """The pose column's JSON, unchanged from the SQLite row."""
    return None if pose is None else json.dumps(pose) if not isinstance(pose, str) else pose
