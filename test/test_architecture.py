"""Where things live: SQL behind the store, no import cycle, modules small enough to read.

* SQL is written in the store package only (``brainmem_ros/memory/store/``). Two other
  storage layers keep their own SQL, as rosbags keeps each backend's in its storage
  module: the fleet tier (``brainmem_ros/fleet/``: PostgreSQL, and the outbox and cache
  tables it keeps in the robot's SQLite) and the rosbag2 storage backends
  (``brainmem_ros/bags/storage_*.py``). Everything else calls named methods.
* No module imports itself back: the graph of module-level imports (``TYPE_CHECKING``
  blocks included, imports inside functions not) has no cycle, and every module
  imports on its own in a fresh interpreter.
* No module of the package is longer than :data:`MAX_LINES`, except those listed in
  :data:`NOT_YET_SPLIT`.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'brainmem_ros'
MAX_LINES = 400
# Longer than MAX_LINES today; each is to be split, none may be added.
NOT_YET_SPLIT: frozenset[str] = frozenset()
# Each storage layer's SQL in its own store modules: the memory's (SQLite), the fleet
# tier's (its server, PostgreSQL, and its own tables in the robot's SQLite, versioned
# apart), and the readers of rosbag2's sqlite3 storage.
SQL_ALLOWED = ('brainmem_ros/memory/store/', 'brainmem_ros/fleet/pg_store.py', 'brainmem_ros/fleet/schema.py',
               'brainmem_ros/fleet/outbox_store.py', 'brainmem_ros/fleet/cache_store.py',
               'brainmem_ros/fleet/local_server.py', 'brainmem_ros/bags/storage_')
# A statement's opening words, as SQL is written here (upper case).
_SQL = re.compile(r'\b(SELECT\b.+\bFROM|INSERT (OR \w+ )?INTO|UPDATE \w+ SET|DELETE FROM|'
                  r'CREATE (TEMP |VIRTUAL )?(TABLE|INDEX|TRIGGER)|DROP (TABLE|TRIGGER|INDEX)|'
                  r'ALTER TABLE|PRAGMA \w+)', re.DOTALL)
_DB_CALLS = frozenset({'execute', 'executemany', 'executescript', 'query'})


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(ROOT).with_suffix('').parts
        yield '.'.join(parts[:-1] if parts[-1] == '__init__' else parts), path


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal but docstrings (f-strings with ``{}`` for their fields)."""
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    inside_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in inside_fstrings:
            continue
        if isinstance(node, ast.JoinedStr):
            text = ''.join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else '{}'
                           for v in node.values)
            yield node.lineno, text
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_sql_only_in_storage_layers() -> None:
    found: list[str] = []
    for _, path in _modules():
        rel = _rel(path)
        if rel.startswith(SQL_ALLOWED):
            continue
        tree = ast.parse(path.read_text(), filename=rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in _DB_CALLS:
                found.append(f'{rel}:{node.lineno}: .{node.func.attr}(...)')
        for lineno, text in _strings(tree):
            if _SQL.search(text):
                found.append(f'{rel}:{lineno}: {text[:60]!r}')
    assert found == [], 'SQL outside the storage layers:\n' + '\n'.join(found)


def test_the_sql_check_sees_sql() -> None:
    tree = ast.parse("db.execute('SELECT id FROM units WHERE x = ?', (1,))\n"
                     "q = f'UPDATE units SET {cols} WHERE id = ?'\n")
    assert sorted(t for _, t in _strings(tree) if _SQL.search(t)) == [
        'SELECT id FROM units WHERE x = ?', 'UPDATE units SET {} WHERE id = ?']


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Modules of the package that ``name`` imports at module level (TYPE_CHECKING too)."""
    is_package = path.name == '__init__.py'
    out: set[str] = set()

    def target(base: str, names: list[str]) -> None:
        for n in names:
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod.
            sub = f'{base}.{n}'
            out.add(sub if sub in known else base)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:
                    pkg = name.split('.') if is_package else name.split('.')[:-1]
                    pkg = pkg[:len(pkg) - node.level + 1]
                    base = '.'.join([*pkg, base] if base else pkg)
                target(base, [a.name for a in node.names])
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(ast.parse(path.read_text()).body)
    return {m for m in out if m in known and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, edges in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(edges)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp: list[str] = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_no_import_cycle() -> None:
    modules = dict(_modules())
    known = set(modules)
    graph = {name: _imports(path, name, known) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_sees_cycles() -> None:
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
    assert _cycles({'a': {'b'}, 'b': set()}) == []


def _import_alone(module: str) -> tuple[str, int, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))
    env = dict(os.environ, PYTHONPATH=path)
    proc = subprocess.run([sys.executable, '-c', f'import {module}'], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return module, proc.returncode, proc.stderr.strip()[-400:]


def test_every_module_imports_alone() -> None:
    names = [name for name, _ in _modules()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        failed = [f'{m}: {err}' for m, rc, err in pool.map(_import_alone, names) if rc]
    assert failed == []


def test_modules_are_small() -> None:
    lines = {_rel(path): len(path.read_text().splitlines()) for _, path in _modules()}
    long = {rel: n for rel, n in lines.items() if n > MAX_LINES and rel not in NOT_YET_SPLIT}
    assert long == {}
    # A module split (or gone) leaves the list, so the list stays the work that is left.
    assert {rel for rel in NOT_YET_SPLIT if lines.get(rel, 0) <= MAX_LINES} == set()
