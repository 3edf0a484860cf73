"""The store's public surface: named methods, transactions, and a read-only block; no raw query.

SQL written elsewhere reaches the robot's SQLite through :meth:`SqliteStore.atomic`
(writes) or :meth:`SqliteStore.reading` (reads) only: the fleet's own tables. Tests and
benchmarks that inspect the database read the file itself (``test/dbfile.py``).
"""

from __future__ import annotations

import ast
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainmem_ros.errors import StoreError
from brainmem_ros.memory.store import SqliteStore

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ('brainmem_ros', 'bench', 'test')
STORE_PACKAGE = 'brainmem_ros/memory/store/'
# `.query(` calls on objects that are not a store: (file, the called object's name).
NOT_A_STORE = frozenset({('bench/peers.py', 'col')})  # a Chroma collection


def _calls(attr: str) -> Iterator[tuple[str, int, str]]:
    """(file, line, the called object as written) of every ``<object>.<attr>(...)`` call."""
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob('*.py')):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == attr:
                    yield rel, node.lineno, ast.unparse(node.func.value)


def test_the_store_has_no_public_query() -> None:
    assert not hasattr(SqliteStore, 'query')


def test_nothing_calls_query_on_a_store() -> None:
    found = [f'{rel}:{line}: {obj}.query(...)' for rel, line, obj in _calls('query')
             if (rel, obj) not in NOT_A_STORE]
    assert found == [], 'raw queries on the store:\n' + '\n'.join(found)


def test_the_private_read_helper_stays_in_the_store_package() -> None:
    found = [f'{rel}:{line}: {obj}._query(...)' for rel, line, obj in _calls('_query')
             if not rel.startswith(STORE_PACKAGE)]
    assert found == [], 'the store package\'s read helper used outside it:\n' + '\n'.join(found)


def test_the_scan_sees_calls() -> None:
    calls = list(_calls('execute'))
    assert any(rel == 'brainmem_ros/fleet/outbox_store.py' and obj == 'db' for rel, _, obj in calls)
    assert any(rel.startswith(STORE_PACKAGE) for rel, _, _ in _calls('_query'))


# -- reading() ----------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / 'memory.db')
    yield s
    s.close()


def _meta(db: sqlite3.Connection, key: str) -> list[tuple[str]]:
    return list(db.execute('SELECT value FROM meta WHERE key = ?', (key,)).fetchall())


def test_reading_refuses_writes_and_lets_them_in_again_after(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match='memory store read failed: .*readonly'), store.reading() as db:
        db.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')")
    assert store.get_meta('k') == ''
    store.set_meta('k', 'v')
    assert store.get_meta('k') == 'v'


def test_reading_inside_a_transaction_sees_its_writes(store: SqliteStore) -> None:
    with store.atomic():
        store.set_meta('a', '1')
        with store.reading() as db:
            assert _meta(db, 'a') == [('1',)]
        store.set_meta('b', '2')  # the transaction can still write
    assert (store.get_meta('a'), store.get_meta('b')) == ('1', '2')


def test_reading_translates_sqlite_failures(store: SqliteStore) -> None:
    with pytest.raises(StoreError, match='memory store read failed: no such table'), store.reading() as db:
        db.execute('SELECT * FROM no_such_table')
    with store.reading() as db:  # the connection is fine afterwards
        assert _meta(db, 'absent') == []


def test_reading_holds_the_lock(store: SqliteStore) -> None:
    writer = threading.Thread(target=store.set_meta, args=('late', 'yes'))
    with store.reading() as db:
        writer.start()
        writer.join(timeout=0.3)
        assert writer.is_alive()  # waits for the block to end
        assert _meta(db, 'late') == []
    writer.join(timeout=10)
    assert not writer.is_alive() and store.get_meta('late') == 'yes'
