"""Security at rest: private file modes, no code loading from data files, confirmed hard delete.

The data directory is created 0700 and every file in it (database, its -wal and
-shm, the vector index, its sidecar) is 0600 whatever the umask; a database
copied in with a looser mode is tightened on open. Nothing under brainmem_ros
loads code from data (pickle, marshal, eval/exec, yaml.load, numpy pickles).
See docs/security.md for SROS2 and what this does and does not protect.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbfile import file_rows

from brainmem_ros.errors import InvalidInputError
from brainmem_ros.memory import BrainMem

PACKAGE = Path(__file__).resolve().parent.parent / 'brainmem_ros'


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0)  # the most permissive: nothing is masked for us
    try:
        yield
    finally:
        os.umask(old)


def test_data_files_are_private_whatever_the_umask(tmp_path: Path, embedder: Any,
                                                   loose_umask: None) -> None:
    data = tmp_path / 'robot' / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        for text in ['The front door code is on the fridge note', 'Anna takes her pills at 8']:
            mem.store(text)
        mem.save_index()
        live = sorted(p.name for p in data.iterdir())
        assert {'memory.db', 'memory.db-wal', 'memory.db-shm', 'vectors.faiss',
                'vectors.faiss.json'} <= set(live), live
        assert mode(data) == 0o700
        assert {p.name: mode(p) for p in data.iterdir()} == dict.fromkeys(live, 0o600)
    assert {p.name: mode(p) for p in data.iterdir()} == {p.name: 0o600 for p in data.iterdir()}


def test_loose_modes_are_tightened_on_open(tmp_path: Path, embedder: Any, loose_umask: None) -> None:
    data = tmp_path / 'mem'
    with BrainMem.open(data, embedder=embedder) as mem:
        mem.store('The spare key is under the flower pot')
    db = data / 'memory.db'
    os.chmod(db, 0o644)  # e.g. copied from a backup with cp
    with BrainMem.open(data, embedder=embedder) as mem:
        assert mode(db) == 0o600
        assert mode(Path(f'{db}-wal')) == 0o600
        assert mem.stats().units == 1


def calls_and_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, f'import {alias.name}'
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, f'from {node.module} import'
        elif isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            constant_args = all(isinstance(a, ast.Constant) for a in node.args)
            if not (name == '__import__' and constant_args):  # __import__('pkgutil') is fine
                yield node.lineno, name
            for kw in node.keywords:
                off = isinstance(kw.value, ast.Constant) and not kw.value.value
                if kw.arg == 'allow_pickle' and not off:
                    yield node.lineno, 'allow_pickle=True'


FORBIDDEN = ('pickle', 'cPickle', 'dill', 'joblib', 'marshal', 'shelve', 'torch.load', 'eval', 'exec',
             'yaml.load', 'yaml.unsafe_load', 'allow_pickle=True', '__import__')


def test_no_code_is_loaded_from_data_files() -> None:
    found = []
    for path in sorted(PACKAGE.rglob('*.py')):
        for line, name in calls_and_imports(ast.parse(path.read_text(), str(path))):
            words = name.replace('import ', '').replace('from ', '').split()
            head = words[0] if words else name
            if any(head == f or head.endswith(f'.{f}') or head.startswith(f'{f}.') for f in FORBIDDEN) \
                    or name in FORBIDDEN:
                found.append(f'{path.relative_to(PACKAGE.parent)}:{line}: {name}')
    assert found == []


def test_forbidden_pattern_scan_works() -> None:
    # The scan above must see what it is looking for.
    tree = ast.parse('import pickle\nfrom marshal import loads\nimport yaml\nyaml.load(x)\n'
                     'np.load(f, allow_pickle=True)\neval(s)\n__import__(name)\n__import__("os")\n')
    names = [n for _, n in calls_and_imports(tree)]
    assert {'import pickle', 'from marshal import', 'yaml.load', 'allow_pickle=True', 'eval'} <= set(names)
    assert names.count('__import__') == 1


def test_hard_delete_needs_confirmation(tmp_path: Path, embedder: Any) -> None:
    with BrainMem.open(tmp_path / 'mem', embedder=embedder) as mem:
        unit = mem.store('The wifi password is written on the router')
        with pytest.raises(InvalidInputError, match='confirm'):
            mem.forget([unit.id], mode='delete')
        assert mem.stats().units == 1
        assert mem.forget([unit.id], mode='delete', confirm=True) == [unit.id]
        assert mem.stats().units == 0
        found = file_rows(mem.store_db.path, "SELECT COUNT(*) FROM units_fts WHERE units_fts MATCH 'wifi'")
        assert found[0][0] == 0  # gone from the full-text index too
