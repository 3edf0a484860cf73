"""The ranking uses all the recall evidence, filters come first, priors stay bounded.

Each test stores hundreds of similar memories with the real encoder, because the
defects these pin only showed among many near-matches, never in a dozen.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from scenarios.routine import routine

from brainmem_ros.errors import ConfigError
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.config import MemoryConfig, RetrievalConfig
from brainmem_ros.memory.text_recall import scanned_words
from brainmem_ros.memory.types import ObservationInput, Pose, UnitFilter, UnitType
from brainmem_ros.memory.typicality import typicality

T0 = 1_760_000_000.0
ROOMS = ('kitchen', 'hallway', 'office', 'bedroom', 'garage')
THINGS = ('mug', 'cup', 'glass', 'bowl', 'plate')


def _similar(n: int, *, episode: str = 'ep-A', start: float = T0,
             pose: bool = False) -> list[ObservationInput]:
    """``n`` memories about drinking vessels in rooms: near-matches of each other."""
    out = []
    for i in range(n):
        text = f'I saw a {THINGS[i % 5]} on the table in the {ROOMS[(i // 5) % 5]} (check {i}).'
        out.append(ObservationInput(text, stamp=start + 60 * i, episode_id=episode,
                                    pose=Pose(float(i % 20), float(i // 20), frame='map') if pose else None))
    return out


def _store(mem: BrainMem, items: list[ObservationInput]) -> list[int]:
    ids = []
    for start in range(0, len(items), 64):
        for result in mem.store_many(items[start:start + 64]):
            assert not isinstance(result, Exception), result
            ids.append(result.unit.id)
    return ids


def test_lexical_only_hit_survives_the_ranking(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, [ObservationInput(f'Replaced the filter of the air purifier in the {ROOMS[i % 5]} '
                                  f'(check {100 + i}).', stamp=T0 + 60 * i) for i in range(300)])
    rare = mem.store('The XK-42 cartridge goes into the kitchen fan.', stamp=T0 + 100)
    query = 'replace the air purifier filter with XK-42'
    # The vector index alone puts the purifier filters first; the code is lexical evidence.
    _, ids = mem.index.search(mem.embedder.embed([query]), 10)
    assert rare.id not in {int(i) for i in ids[0]}
    hits = mem.retrieve(query, top_k=5)
    assert hits[0].unit.id == rare.id
    assert hits[0].parts.lexical > hits[1].parts.lexical
    assert hits[0].parts.vector < max(h.parts.vector for h in hits[1:])


def test_reinforced_memory_rises_among_equals_but_never_buries_a_better_match(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, _similar(200))
    a = mem.store('The user asked me for the spare charger at the office desk.', stamp=T0 + 10)
    b = mem.store('The user asked me for the spare charger at the hallway desk.', stamp=T0 + 10)
    weak = mem.store('I wiped the office desk.', stamp=T0 + 20)
    query = 'who wanted the spare charger?'
    first = [h.unit.id for h in mem.retrieve(query, top_k=3)]
    loser = b.id if first.index(a.id) < first.index(b.id) else a.id
    mem.reinforce([loser], reward=1.0)
    assert mem.retrieve(query, top_k=1)[0].unit.id == loser
    for _ in range(5):
        mem.reinforce([weak.id], reward=1.0)
    ranked = [h.unit.id for h in mem.retrieve(query, top_k=10)]
    assert ranked.index(a.id) < ranked.index(weak.id) if weak.id in ranked else True
    assert ranked.index(b.id) < ranked.index(weak.id) if weak.id in ranked else True


@pytest.mark.parametrize('how', ['episode', 'window', 'radius', 'as_of'])
def test_filters_find_matches_outside_the_vector_shortlist(mem_factory: Any, how: str) -> None:
    # Without typicality: the 400 near-copies would step back for the one plain memory,
    # which would then be found without a filter, and the test would prove nothing.
    config = MemoryConfig.from_mapping({'retrieval.typicality': 0.0})
    mem: BrainMem = mem_factory(clock=lambda: T0 + 10 * 86400, config=config)
    _store(mem, _similar(400, pose=True))
    # One plain memory, unlike the query's wording, far from the others in every way.
    target = mem.store('Left a mug by the greenhouse door.', stamp=T0 + 5 * 86400, episode_id='ep-B',
                       pose=Pose(100.0, 100.0, frame='map'))
    query = 'I saw a mug on the table in the kitchen'
    assert target.id not in {h.unit.id for h in mem.retrieve(query, top_k=40)}
    every: dict[str, dict[str, Any]] = {
        'episode': {'episode_id': 'ep-B'},
        'window': {'since': T0 + 4 * 86400, 'until': T0 + 6 * 86400},
        'radius': {'near': Pose(101.0, 100.0, frame='map'), 'radius': 3.0},
        'as_of': {'as_of': T0 + 1000},
    }
    options = every[how]
    hits = mem.retrieve(query, top_k=5, **options)
    if how == 'as_of':
        # Only what existed then: the 17 memories stored by T0 + 1000 s, never the target.
        assert hits and all(h.unit.stamp <= T0 + 1000 for h in hits)
        assert target.id not in {h.unit.id for h in hits}
    else:
        assert [h.unit.id for h in hits] == [target.id]


def test_reflection_units_do_not_flood_ordinary_recall(mem_factory: Any) -> None:
    config = MemoryConfig.from_mapping({'dynamics.reflect_threshold': 20.0})
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400, config=config)
    items = [ObservationInput(f'I tried to open the kitchen drawer and it was stuck (try {i}).',
                              stamp=T0 + 60 * i, episode_id='drawer') for i in range(60)]
    _store(mem, items)
    reflections = mem.retrieve('kitchen drawer stuck', top_k=10, types=['reflection'])
    assert reflections and all(h.unit.type is UnitType.REFLECTION for h in reflections)
    ordinary = mem.retrieve('kitchen drawer stuck', top_k=10)
    assert ordinary and all(h.unit.type is not UnitType.REFLECTION for h in ordinary)


def test_score_parts_are_the_score(mem_factory: Any) -> None:
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, _similar(100))
    cfg = mem.config.retrieval
    for h in mem.retrieve('a glass on the table in the garage', top_k=10):
        p = h.parts
        stepped_back = (1.0 - p.typicality) * (1.0 - cfg.diversity * p.redundancy)
        assert h.score == pytest.approx(p.relevance * p.prior * stepped_back, rel=1e-6)
        assert 0.0 <= p.typicality < 1.0
        shares = cfg.w_vector * p.vector + cfg.w_lexical * p.lexical + cfg.w_entity * p.entity
        assert p.relevance >= shares / (cfg.w_vector + cfg.w_lexical + cfg.w_entity) - 1e-6
        assert 0.0 <= p.relevance <= 1.0 + 1e-9 and 0.8 <= p.prior <= 1.25


def test_priors_are_bounded_by_configuration() -> None:
    with pytest.raises(ConfigError, match='priors sum'):
        dataclasses.replace(RetrievalConfig(), prior_strength=0.25, prior_recency=0.25, prior_importance=0.1)
    with pytest.raises(ConfigError, match='default_top_k'):
        MemoryConfig.from_mapping({'retrieval.default_top_k': 50, 'retrieval.max_top_k': 20})


def test_near_copies_do_not_fill_the_top(mem_factory: Any) -> None:
    # A month of the same log line with one number changed: the planner gains nothing
    # from three of them when another memory also answers. (Typicality off: it alone
    # would put the other memory first; this is the step back of diversity.)
    config = MemoryConfig.from_mapping({'retrieval.typicality': 0.0})
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400, config=config)
    _store(mem, [ObservationInput(f'Docked at the charging station; battery at {10 + i} percent.',
                                  stamp=T0 + 60 * i) for i in range(40)])
    _store(mem, [ObservationInput(f'Wiped the {thing} in the kitchen (round {i}).', stamp=T0 + 30 * i)
                 for i, thing in enumerate(('table', 'counter', 'sink', 'stove') * 100)])
    loose = mem.store('The cable of the charging station in the garage is loose.', stamp=T0 + 30)
    query = 'is the charging station working?'
    hits = mem.retrieve(query, top_k=3)
    assert loose.id in [h.unit.id for h in hits]
    assert hits[0].parts.redundancy == 0.0 and hits[0].unit.text.startswith('Docked')
    copies = [h for h in hits if h.unit.text.startswith('Docked')]
    assert copies and all(h.parts.redundancy > 0.5 for h in copies[1:])
    # Without the step back, the copies fill the top (what this test would catch).
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, diversity=0.0)
    flat = mem.retrieve(query, top_k=3)
    assert all(h.unit.text.startswith('Docked') for h in flat)
    assert all(h.parts.redundancy == 0.0 for h in flat)


def test_typicality_counts_the_near_copies_that_score_as_high(embedder: Any) -> None:
    # Real sentence vectors: a month of battery levels at the dock is one family of
    # near-copies; the closet key is not part of it.
    family = [f'Docked at the charging station; battery at {n} percent.' for n in range(20, 100, 2)]
    texts = [*family, 'The storage closet is locked; its key is in the top kitchen drawer.']
    vectors = list(embedder.embed(texts))
    equal = np.ones(len(texts))
    t = typicality(vectors, equal, weight=0.3, threshold=0.75)
    assert t[-1] == 0.0  # no near-copy: keeps its score
    assert t[:-1].min() > 0.4  # forty that the query cannot tell apart: each keeps under 60%
    # When the query singles one out (its siblings score 20% lower), it keeps most of it,
    # while the siblings still count each other.
    singled = equal.copy()
    singled[1:-1] = 0.8
    t = typicality(vectors, singled, weight=0.3, threshold=0.75)
    assert t[0] < 0.2 and t[1:-1].min() > 0.4
    assert not typicality(vectors, equal, weight=0.0, threshold=0.75).any()


def test_a_question_that_singles_out_one_of_a_family_keeps_its_answer(mem_factory: Any) -> None:
    # "Where did I put the mug?" among weeks of "Put the ... on the ...": the answer is a
    # near-copy of a hundred memories, but the query ranks those lower, so they do not
    # count against it (counting them took such answers out of the top 3).
    mem: BrainMem = mem_factory(clock=lambda: T0 + 30 * 86400)
    things = ('plate', 'broom', 'towel', 'sponge', 'bowl', 'pan', 'lid', 'cloth', 'spoon', 'fork')
    places = ('stove', 'counter', 'sink', 'kitchen table', 'cupboard')
    _store(mem, [ObservationInput(f'Put the {things[i % 10]} on the {places[(i // 10) % 5]} in the kitchen.',
                                  stamp=T0 + 3600 * i) for i in range(200)])
    mug = mem.store('Put the mug on the counter in the kitchen.', stamp=T0 + 3600 * 201)
    _store(mem, [ObservationInput(t, stamp=T0 + 3600 * (202 + i)) for i, t in enumerate(
        ('The user is reading in the study.', 'The kitchen light was switched off.',
         'Checked the kitchen: nothing out of place.', 'The front door is locked.'))])
    hits = mem.retrieve('where did I put the mug in the kitchen?', top_k=3)
    assert hits[0].unit.id == mug.id
    assert hits[0].parts.typicality < 0.05


def test_a_memory_that_fits_the_question_and_the_goal_beats_one_that_fits_the_question(
        mem_factory: Any) -> None:
    # "make the user a drink" to "prepare breakfast" among 500 routine observations: the
    # errands ("The user asked me to bring the candle") are as close to the question
    # alone, the morning tea also fits the goal. The best part alone puts an errand
    # first; part_agreement counts the goal too.
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, [ObservationInput(r.text, stamp=r.stamp, episode_id=r.episode_id) for r in routine(500)])
    tea = mem.store('The user asked for green tea with no sugar every morning.', stamp=T0)

    def first() -> int:
        return mem.retrieve('make the user a drink', goal='prepare breakfast', top_k=3)[0].unit.id

    assert first() == tea.id
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, part_agreement=0.0)
    assert first() != tea.id


def test_vector_candidates_keep_the_words_they_share(mem_factory: Any) -> None:
    # Short memories holding the query's one known word outrank a long one in BM25, so
    # the long one is outside the lexical list; the word it shares must still count.
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, [ObservationInput(f'Floor {i} checked.', stamp=T0 + 60 * i) for i in range(300)])
    _store(mem, [ObservationInput(f'Wiped the table (round {i}).', stamp=T0 + 60 * i) for i in range(300)])
    long = mem.store('I spilled orange juice by the fridge door and mopped up the floor with a towel '
                     'before anyone slipped on it.', stamp=T0 + 30)
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_candidates=20)
    query = 'a wet floor after a drink fell over'
    listed = mem.store_db.fts_scored('"floor"', limit=20, unit_filter=UnitFilter())
    assert long.id not in [uid for uid, _ in listed]
    hits = mem.retrieve(query, top_k=5)
    assert hits[0].unit.id == long.id
    assert hits[0].parts.lexical > 0.0


@pytest.mark.parametrize('ties', [5, 0])
def test_a_routine_the_words_cannot_tell_apart_does_not_hide_the_answer(mem_factory: Any, ties: int) -> None:
    # A month of "The X is on the charging dock." and its like: each template's memories
    # share one BM25 score for the question's words, a higher one than the answer's (it is
    # longer), and filled the lexical list. The vector and entity lists are kept short
    # here so that only the lexical list can find the answer: without the matches past
    # the runs (lexical_ties 0) it was not a candidate.
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    things = ('water', 'towel', 'remote', 'backpack', 'cushion', 'blanket', 'book', 'newspaper', 'notebook',
              'sponge', 'dustpan', 'shoes', 'candle', 'laundry', 'basket', 'mug', 'trash', 'fork', 'pillow',
              'glasses', 'toy', 'box', 'broom', 'jacket', 'tablet', 'pen', 'cup', 'charger', 'dish', 'plate',
              'bowl', 'vase', 'spoon', 'phone')
    templates = ('The {} is on the charging dock.', 'Moved the {} to the charging dock.',
                 'Saw the {} on the charging dock.')
    _store(mem, [ObservationInput(templates[i % 3].format(things[i % 34]), stamp=T0 + 60 * i)
                 for i in range(306)])
    answer = mem.store('My charging dock is next to the kitchen door.', stamp=T0 + 30)
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_ties=ties, vector_candidates=10,
                                               entity_candidates=0)
    hits = [h.unit.id for h in mem.retrieve('where is the charging dock?', top_k=3)]
    assert (answer.id in hits) == (ties > 0)


def test_candidate_lists_grow_with_top_k(mem_factory: Any) -> None:
    # The vector list alone (no activation, no other list) supplies results: at its
    # default of 50 (given per 10 results), 60 results need it scaled up.
    mem = mem_factory()
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, hops=0, lexical_candidates=0,
                                               entity_candidates=0)
    for i in range(90):
        mem.store(f'Box {i} of screws stored on rack {i % 7} in aisle {i}')
    got = mem.retrieve('box of screws on the rack', top_k=60)
    assert len(got) == 60


def test_words_in_too_many_memories_are_left_out_of_the_lexical_search(mem_factory: Any) -> None:
    mem = mem_factory()
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_max_df=20)
    mem.store('The hairbrush is in the top drawer of the hallway cabinet')
    for i in range(30):
        mem.store(f'Patrolled the hallway, round {i}')
    retriever = mem.retriever
    # 'hallway' is in 31 memories (>= 20): its newest matches would fill the scanned window.
    assert scanned_words(mem.store_db, retriever.config, ['hairbrush', 'hallway']) == \
        (['hairbrush'], ({'hairbrush': 1}, 31))
    assert scanned_words(mem.store_db, retriever.config, ['hallway', 'patrolled'])[0] == \
        ['hallway', 'patrolled']  # all common
    got = mem.retrieve('hairbrush in the hallway', top_k=3)
    assert got[0].unit.text.startswith('The hairbrush') and got[0].parts.lexical > 0
    # A store with fewer memories than the limit scans every word.
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_max_df=1000)
    assert scanned_words(mem.store_db, retriever.config, ['hairbrush', 'hallway']) == \
        (['hairbrush', 'hallway'], None)


@pytest.mark.parametrize('lag_decay', [1.0, 0.7])
def test_activation_reaches_the_step_that_followed_a_match_first(mem_factory: Any, lag_decay: float) -> None:
    """What happened next in an analogous episode is what a planner can use: it is reached first.

    The two later steps share no word with the question and are equally recent; only
    activation from the matching memory reaches them. Without the lag decay they receive
    the same; with it the step right after the match receives more and ranks higher.
    """
    links = dataclasses.replace(MemoryConfig().links, temporal_lag_decay=lag_decay)
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400,
                                config=dataclasses.replace(MemoryConfig(), links=links))
    _store(mem, [ObservationInput(r.text, stamp=T0 - 86400 + r.stamp % 86400, episode_id=r.episode_id)
                 for r in routine(300)])
    problem = mem.store('The jar on the top cupboard shelf was out of my reach.', stamp=T0, episode_id='jar')
    step = mem.store('I pushed the stool over and climbed onto it.', stamp=T0 + 20, episode_id='jar')
    later = mem.store('The jam was spread on the toast.', stamp=T0 + 40, episode_id='jar')
    hits = {h.unit.id: h for h in mem.retrieve('the torch on the hook is out of my reach', top_k=50)}
    assert problem.id in hits and step.id in hits and later.id in hits
    first, second = hits[step.id].parts, hits[later.id].parts
    assert first.lexical == second.lexical == 0.0
    if lag_decay == 1.0:
        assert first.activation == pytest.approx(second.activation, rel=0.1)
    else:
        assert first.activation > 1.2 * second.activation
        assert hits[step.id].score > hits[later.id].score


def test_a_synonym_of_a_query_word_finds_a_memory_worded_otherwise(mem_factory: Any) -> None:
    """WordNet's synonyms are searched too, each counting for less than the word itself."""
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, [ObservationInput(r.text, stamp=T0 - 86400 + r.stamp % 86400, episode_id=r.episode_id)
                 for r in routine(300)])
    other = mem.store('The spectacles are on the bedside table in the guest room.', stamp=T0)
    same = mem.store('The glasses are on the bedside table in the study.', stamp=T0)
    hits = {h.unit.id: h.parts for h in mem.retrieve('where are the reading glasses?', top_k=10)}
    assert other.id in hits and same.id in hits
    assert hits[same.id].lexical > hits[other.id].lexical > 0.0
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_synonyms=0.0)
    hits = {h.unit.id: h.parts for h in mem.retrieve('where are the reading glasses?', top_k=10)}
    assert other.id not in hits or hits[other.id].lexical == 0.0


def test_a_verb_of_the_question_finds_the_instrument_named_after_it(mem_factory: Any) -> None:
    """"heat the guest room": the memory names the heater, not the act (nor the room)."""
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    _store(mem, [ObservationInput(r.text, stamp=T0 - 86400 + r.stamp % 86400, episode_id=r.episode_id)
                 for r in routine(300)])
    tool = mem.store('The portable heater is stored in the attic.', stamp=T0)
    for question in ('heat the guest room', 'the guest room needs heating'):
        hits = mem.retrieve(question, top_k=3)
        assert hits[0].unit.id == tool.id and hits[0].parts.lexical > 0.0
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_synonyms=0.0)
    assert tool.id not in {h.unit.id for h in mem.retrieve('heat the guest room', top_k=3)}
