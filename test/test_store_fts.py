"""Lexical recall stays bounded at scale and still finds rare words at any age."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from brainmem_ros.memory.config import RetrievalConfig
from brainmem_ros.memory.query import Query, fts_expression
from brainmem_ros.memory.store import SqliteStore, fts_idf, fts_lengths
from brainmem_ros.memory.text_recall import phrase_idf, text_candidates
from brainmem_ros.memory.types import MemoryUnit, UnitFilter, UnitType


def test_rare_words_found_at_any_age_common_words_bounded(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'm.db')
    vec = np.zeros(4, dtype=np.float32)
    with store.atomic():
        text = 'Ms. Okonkwo left a parcel at the kitchen desk'
        old = store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)
        for i in range(1500):
            store.insert_unit(MemoryUnit(id=0, stamp=2.0 + i, text=f'I wiped the kitchen counter, pass {i}',
                                         last_access=2.0, valid_from=2.0), vec)
    def search(match: str, *, active_only: bool = True) -> list[int]:
        unit_filter = UnitFilter(types=frozenset(UnitType), include_marginalized=not active_only)
        return [uid for uid, _ in store.fts_scored(match, limit=10, unit_filter=unit_filter)]

    assert search('"okonkwo"') == [old]
    common = search('"kitchen"')
    assert len(common) == 10 and old not in common  # only the newest 1,000 matches are ranked
    store.set_fields(old, marginalized=1)
    assert search('"okonkwo"') == []
    assert search('"okonkwo"', active_only=False) == [old]
    store.close()


def test_document_counts_are_exact_until_the_store_grows_one_percent(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / 'm.db')
    vec = np.zeros(4, dtype=np.float32)

    def add(text: str) -> None:
        store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)

    try:
        for i in range(3):
            add(f'The kettle boiled, round {i}')
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 3}
        add('The kettle is empty')  # a small store: any growth counts again
        assert store.term_document_counts(['kettles'])[0] == {'kettl': 4}
        with store.atomic():
            for i in range(196):
                add(f'Swept the floor, pass {i}')
        counts, total = store.term_document_counts(['kettle'])
        assert (counts, total) == ({'kettl': 4}, 200)
        add('A second kettle arrived')  # 201 units: within 1% of 200, the count is held
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 4}
        with store.atomic():
            for i in range(2):
                add(f'Another kettle, number {i}')
        assert store.term_document_counts(['kettle'])[0] == {'kettl': 7}  # 203: counted again
    finally:
        store.close()


def _beside_routine(path: Path) -> tuple[SqliteStore, Callable[[str], int]]:
    """A store of 3,000 short routine memories, and a function that adds a memory to it."""
    store = SqliteStore(path)
    vec = np.zeros(4, dtype=np.float32)

    def add(text: str) -> int:
        return store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)

    with store.atomic():
        for i in range(3000):
            add(f'Put the cup on shelf {i}.')
    return store, add


def test_long_memories_are_scored_against_the_length_of_their_competitors(tmp_path: Path) -> None:
    """Weeks of short routine beside a few long memories: FTS5's bm25() judges every length
    against the store's mean, which the routine pulls down, so a long memory holding both
    query words lost to a short one holding the common word. Against the mean length of
    the matches (``pool_length=1``), the memory that answers comes first."""
    store, add = _beside_routine(tmp_path / 'm.db')
    filler = 'and then we talked for a long while about the weather the garden and the week ahead'
    try:
        with store.atomic():
            talk = [add(f'Nate: {filler}, part {i}.') for i in range(40)]
            answer = add(f'Nate: the producer called back today {filler}.')
            short = add('Nate waved.')
        everything = UnitFilter(types=frozenset(UnitType))

        def ranked(pool_length: float) -> list[int]:
            best, window = store.fts_window('"nate" OR "producer"', limit=5, unit_filter=everything,
                                            pool_length=pool_length)
            assert set(window) == {*talk, answer, short}
            return [uid for uid, _ in best]

        assert ranked(0.0)[0] == short  # FTS5's own scores: the two-word memory wins
        assert ranked(1.0)[0] == answer
        # Filtered searches rank the same way.
        episode = UnitFilter(types=frozenset(UnitType), since=0.5)
        best, _ = store.fts_window('"nate" OR "producer"', limit=5, unit_filter=episode, pool_length=1.0)
        assert best[0][0] == answer
    finally:
        store.close()


@pytest.mark.parametrize('narrowed', [False, True])
def test_a_run_of_equal_scores_does_not_hide_the_next_best_match(tmp_path: Path, narrowed: bool) -> None:
    """A routine logged a hundred times holds the query's words in texts of one length:
    one BM25 score. It filled the shortlist, and the one memory that says something else
    was never a candidate; the best matches counting a few of each run are candidates too."""
    store = SqliteStore(tmp_path / 'm.db')
    vec = np.zeros(4, dtype=np.float32)

    def add(text: str) -> int:
        return store.insert_unit(MemoryUnit(id=0, stamp=1.0, text=text, last_access=1.0, valid_from=1.0), vec)

    try:
        with store.atomic():
            answer = add('My charging dock is next to the kitchen door.')
            run = [add(f'The thing{i} is on the charging dock.') for i in range(100)]
            other = add('The old charging dock cable was thrown away in the spring clean.')
        everything = UnitFilter(types=frozenset(UnitType), since=0.5 if narrowed else None)

        def best(ties: int) -> list[int]:
            found, _ = store.fts_window('"charging" OR "dock"', limit=20, unit_filter=everything, ties=ties)
            return [uid for uid, _ in found]

        alone = best(0)
        assert len(alone) == 20 and set(alone) <= set(run)
        deeper = best(5)
        assert deeper[:20] == alone  # the best 20 stay, runs whole
        assert answer in deeper and other in deeper
        assert deeper.index(answer) < deeper.index(other)  # still in the order of their scores
        assert len(deeper) == 22
    finally:
        store.close()


def test_words_common_among_the_matches_weigh_less_than_rare_ones(tmp_path: Path) -> None:
    """Weeks of routine beside a conversation: the speakers' names are in every turn but
    rare in the store, so by the store's IDF a turn holding both names outscored the one
    memory holding the question's rare word. Weighed by their IDF among the matches
    (``pool_idf=1``), the names count for little and the rare word's memory comes first;
    a word is never weighed above its store-wide IDF."""
    store, add = _beside_routine(tmp_path / 'm.db')
    try:
        with store.atomic():
            talk = [add(f'Nate: hi Joanna, round {i}.') for i in range(60)]
            answer = add('Someone left the kayak leaning against the wall of the garage overnight.')
        words = ['nate', 'joanna', 'kayak']
        term_idf = phrase_idf(store, words, store.term_document_counts(words))
        assert set(term_idf) == {'"nate"', '"joanna"', '"kayak"'}
        assert term_idf['"kayak"'] > term_idf['"nate"'] > 0.0
        everything = UnitFilter(types=frozenset(UnitType))

        def ranked(pool_idf: float) -> tuple[list[int], dict[int, float]]:
            best, window = store.fts_window(fts_expression(words), limit=5, unit_filter=everything,
                                            pool_length=1.0, term_idf=term_idf, pool_idf=pool_idf)
            assert set(window) == {*talk, answer}
            return [uid for uid, _ in best], window

        before, scores_before = ranked(0.0)
        after, scores_after = ranked(1.0)
        assert before[0] != answer and before[0] in talk
        assert after[0] == answer
        assert scores_after[answer] == scores_before[answer]  # its one word keeps its weight
        assert all(scores_after[t] < scores_before[t] for t in talk)
        # A filtered search weighs the words among the filter's matches, the same way here.
        since = UnitFilter(types=frozenset(UnitType), since=0.5)
        best, _ = store.fts_window(fts_expression(words), limit=5, unit_filter=since, pool_length=1.0,
                                   term_idf=term_idf, pool_idf=1.0)
        assert best[0][0] == answer
    finally:
        store.close()


def test_lexical_recall_weighs_words_by_the_pool_unless_configured_off(tmp_path: Path) -> None:
    """The retriever's lexical recall passes the words' store-wide IDF to the search:
    ``lexical_pool_idf`` decides which memory holds the best lexical evidence."""
    store, add = _beside_routine(tmp_path / 'm.db')
    try:
        with store.atomic():
            talk = {add(f'Nate: hi Joanna, round {i}.') for i in range(60)}
            answer = add('Someone left the kayak leaning against the wall of the garage overnight.')
        q = Query(query='what did Nate tell Joanna about the kayak?', top_k=5)

        def best(pool_idf: float) -> int:
            found = text_candidates(store, RetrievalConfig(lexical_pool_idf=pool_idf), q)
            return max(found.lexical, key=lambda uid: found.lexical[uid])

        assert best(1.0) == answer
        assert best(0.0) in talk
    finally:
        store.close()


@pytest.mark.parametrize('module', [fts_lengths, fts_idf], ids=['fts_lengths', 'fts_idf'])
def test_docstring_examples_run(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted >= 2 and result.failed == 0
