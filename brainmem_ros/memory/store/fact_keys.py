"""Which filed entities the names a user types refer to, for all of a query's names at once.

A Retrieve asks this for every entity the query mentions (a planner's question, goal and
state name ten to twenty: "the potted plant", "plant", "the user", "the hallway"), so the
lookups are batched: one statement for the head nouns of all the names, and one for each
fallback only when some name needs it. Asked a name at a time, the same answers took
three statements per name, 2-10 ms a Retrieve at 100k units even with no fact filed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from brainmem_ros.memory.entity_names import (
    CONTAINERS,
    aliases,
    container_keys,
    entity_key,
    holding,
    placed_first,
    referents,
    shown_by,
    singular,
)
from brainmem_ros.memory.facts import LOCATION
from brainmem_ros.memory.store.sql import qmarks

#: Rows of one read statement (``SqliteStore._query``).
Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def keys_by_name(query: Query, names: Sequence[str]) -> dict[str, list[str]]:
    """Entity keys that each of ``names`` refers to, the exact key first; [] for none.

    A name refers to the keys of its own words and of other names of the same thing
    ("fridge", "refrigerator") and, for a part or value of a thing ("the front door lock",
    "the oven temperature"), of the thing; failing those, to the container holding it ("the
    basil": the basil pot), to the one thing of its kind said to be where its other words
    say ("the garage light"), or to what a container or plant no fact names holds or is of
    ("the basil plant": the basil).
    """
    out: dict[str, list[str]] = {name: [] for name in names}
    plans = {name: plan for name in out if (plan := _plan(name)) is not None}
    if not plans:
        return out
    heads = sorted(set().union(*(h for _, _, h, _ in plans.values())))
    by_head: dict[str, list[str]] = {}
    for entity, head in query(f'SELECT DISTINCT entity, head FROM facts WHERE head IN ({qmarks(len(heads))})',
                              heads):
        by_head.setdefault(head, []).append(entity)
    found: dict[str, set[str]] = {}
    for name, (_, said, own, holder) in plans.items():
        rows = [e for h in own for e in by_head.get(h, ())]
        found[name] = ({k for n in said for k in referents(n, rows, fallback=False)}
                       or set(referents(holder, rows, fallback=False) if holder else ())
                       or set(referents(name, rows)))
    # Each fallback for the names still unmatched (the last two for names of several words).
    for fallback, several in ((_held, False), (_placed, True), (_contents, True)):
        fallback(query, {n: plans[n][0] for n, keys in found.items()
                         if not keys and (not several or ' ' in plans[n][0])}, found)
    for name, keys in found.items():
        key = plans[name][0]
        out[name] = sorted(keys, key=lambda k: (k != key, len(k), k))
    return out


# Pure, and asked for the same names by one Retrieve after another (a planner's goal and
# state, the robot's rooms and things): the words were a third of this lookup's time.
@lru_cache(maxsize=4096)
def _plan(name: str) -> tuple[str, tuple[str, ...], frozenset[str], str] | None:
    """(the name's key, the names it is said by, their head words, the name without the phrase
    after it that says what it is for); None for no key."""
    key = entity_key(name)
    if not key:
        return None
    # "the pallet of boxes" is said of the pallet: what holds the rest is the thing asked about.
    container, of, _ = name.partition(' of ')
    typed_as = (name, shown_by(name), placed_first(name), container if of else '')
    said = tuple(dict.fromkeys(n for typed in typed_as for n in (typed, *aliases(typed)) if n))
    # "the spare keycard for room 305" is the keycard when no thing is named so in full.
    holder, purpose, _ = name.partition(' for ')
    holder = holder if purpose else ''
    heads = frozenset(singular(w) for n in (*said, holder) if n for w in entity_key(n).split())
    return key, said, heads, holder


def with_containers(query: Query, name: str, keys: list[str]) -> list[str]:
    """``keys`` (those ``name`` refers to) and, after them, the one container named by exactly
    what it holds ("the basil": also the basil pot it was moved in before it was named alone;
    a "laptop bag" holds some laptop, not the silver laptop). One indexed lookup."""
    if not keys:
        return keys
    held = _filed(query, container_keys(name))
    return keys + held if len(held) == 1 and held[0] not in keys else keys


def _filed(query: Query, keys: Sequence[str]) -> list[str]:
    """Those of ``keys`` some fact is filed under (one indexed lookup)."""
    if not keys:
        return []
    return [r[0] for r in query(f'SELECT DISTINCT entity FROM facts WHERE entity IN ({qmarks(len(keys))})',
                                list(keys))]


def _held(query: Query, unmatched: dict[str, str], found: dict[str, set[str]]) -> None:
    """"The basil": the one container whose name holds the head noun (the basil pot)."""
    lasts = sorted({key.split()[-1] for key in unmatched.values()})
    if not lasts:
        return
    where = ' OR '.join(['entity LIKE ? OR entity LIKE ?'] * len(lasts))
    rows = [r[0] for r in query(f'SELECT DISTINCT entity FROM facts WHERE {where}',
                                [p for h in lasts for p in (f'{h} %', f'% {h} %')])]
    for name, key in unmatched.items():
        head = key.split()[-1]
        found[name] = set(holding(head, [e for e in rows if e.startswith(f'{head} ') or f' {head} ' in e]))


def _contents(query: Query, unmatched: dict[str, str], found: dict[str, set[str]]) -> None:
    """"The basil plant", "the basil pot" when neither is known: the basil (what it is of)."""
    inner = {name: ' '.join(key.split()[:-1]) for name, key in unmatched.items()
             if key.split()[-1] in CONTAINERS}
    known = set(_filed(query, sorted(set(inner.values()))))
    for name, key in inner.items():
        found[name] = {key} if key in known else set()


def _placed(query: Query, unmatched: dict[str, str], found: dict[str, set[str]]) -> None:
    """"The garage light": the one light whose location holds the name's other words."""
    lasts = sorted({key.split()[-1] for key in unmatched.values()})
    if not lasts:
        return
    by_head: dict[str, list[tuple[str, str]]] = {}
    for entity, value, head in query(f'SELECT entity, value, head FROM facts WHERE head IN '
                                     f'({qmarks(len(lasts))}) AND attribute = ?', (*lasts, LOCATION)):
        by_head.setdefault(head, []).append((entity, value))
    for name, key in unmatched.items():
        where = set(key.split()[:-1])
        placed = {e for e, v in by_head.get(key.split()[-1], ()) if where <= set(entity_key(v).split())}
        found[name] = placed if len(placed) == 1 else set()
