"""A question about a thing is not answered by the memories of things put on it.

"clean the stove" shares "stove" with a month of "Put the X on the stove", as much as with
the lesson "I touched the stove while it was hot": the memories that name the stove only as a
place keep part of their lexical evidence (``RetrievalConfig.lexical_places``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from scenarios.routine import routine

from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import ObservationInput
from brainmem_ros.memory.word_roles import PlaceDiscount, word_roles

T0 = 1_760_000_000.0
THINGS = ('broom', 'bowl', 'vase', 'remote control', 'pillow', 'water bottle', 'plate', 'laundry', 'mug',
          'towel', 'book', 'sponge', 'candle', 'tablet', 'pen', 'cup', 'charger', 'spoon', 'phone', 'basket')


@pytest.mark.parametrize(('text', 'things', 'places'), [
    ('Put the broom on the stove in the kitchen.', {'put', 'broom'}, {'stove', 'kitchen'}),
    ('Carried the bowl from the kitchen to the stove.', {'carried', 'bowl'}, {'kitchen', 'stove'}),
    ('I touched the stove while it was hot.', {'touched', 'stove', 'hot'}, set()),
    ('The milk carton is on the top shelf of the fridge.', {'milk', 'carton'}, {'top', 'shelf', 'fridge'}),
    # "to" before a verb starts no place; "with" ends one.
    ('I want to paint the house.', {'want', 'paint', 'house'}, set()),
    ('Put the cup in the sink with the plates.', {'put', 'cup', 'plates'}, {'sink'}),
    # A time or a number says when, not where.
    ('Moved the mug to the desk on Saturday at 5 pm.', {'moved', 'mug'}, {'desk'}),
    # Nothing was put there: what the memory is about.
    ('We went to a pride parade last weekend.', {'went', 'pride', 'parade', 'last'}, set()),
])
def test_places_are_the_words_after_a_spatial_preposition_that_hold_a_thing(
        text: str, things: set[str], places: set[str]) -> None:
    roles = word_roles(text)
    assert roles.places == places
    assert things <= roles.things
    assert not roles.things & places


def test_a_question_names_its_places_without_a_thing_put_there() -> None:
    assert word_roles('what is on the stove?', holding=False).places == {'stove'}
    assert word_roles('what is on the stove?').places == set()
    assert word_roles('clean the stove', holding=False).things == {'clean', 'stove'}


@pytest.fixture
def terms_of(tmp_path: Path) -> Iterator[Callable[[Sequence[str]], list[frozenset[str]] | None]]:
    """The index's own terms of each text (FTS5's porter tokenizer), as retrieval asks them."""
    store = SqliteStore(tmp_path / 'memory.db')
    yield store.terms_of
    store.close()


def test_a_memory_keeps_what_it_does_not_name_only_as_a_place(terms_of: Any) -> None:
    discount = PlaceDiscount(terms_of, ['clean the stove', 'clean the kitchen'],
                             {'clean': 1.0, 'stove': 3.0, 'kitchen': 1.0}, share=0.5)
    kept = discount.factors({
        1: 'Put the broom on the stove in the kitchen.',  # both held words only as places
        2: 'I touched the stove while it was hot.',  # the stove as a thing
        3: 'Put the broom on the stove; the stove was hot.',  # both: a thing somewhere in it
        4: 'Wiped the kitchen table.',  # no place at all
        5: 'I clean the sink in the kitchen.',  # "clean" in full, "kitchen" as a place
    })
    assert kept[1] == pytest.approx(1.0 - 0.5 * 4.0 / 4.0)
    assert kept[5] == pytest.approx(1.0 - 0.5 * 1.0 / 2.0)
    assert 2 not in kept and 3 not in kept and 4 not in kept
    # A question that says where asks about the place: nothing is discounted.
    assert not PlaceDiscount(terms_of, ['what is on the stove?'], {'stove': 3.0}, share=0.5).active
    assert not PlaceDiscount(terms_of, ['clean the stove'], {'stove': 3.0}, share=0.0).active


def test_a_synonym_of_a_thing_is_a_thing_too(terms_of: Any) -> None:
    # "laundry basket" is searched for "clothes hamper": a memory that puts something in the
    # laundry basket names it as a place, one that carries it names it as a thing.
    discount = PlaceDiscount(terms_of, ['take the heavy clothes hamper to the basement'],
                             {'heavy': 2.0, 'clothes': 2.0, 'hamper': 4.0, 'basement': 2.0}, share=0.5,
                             synonyms=[('laundry basket', 'clothes hamper', 1.6)])
    kept = discount.factors({1: 'Moved the jacket to the laundry basket.',
                             2: 'Carrying the full laundry basket down the stairs, I nearly fell.',
                             3: 'Put the towel on the basket.'})  # half of the synonym is no match
    assert kept == {1: pytest.approx(0.5)}


@pytest.mark.parametrize('share', [0.5, 0.0])
def test_a_lesson_about_a_thing_outranks_the_things_put_on_it(mem_factory: Any, share: float) -> None:
    # A thousand routine observations (a stove in one in a hundred), and a run of things put
    # on the stove: the lesson names the stove as the thing it touched.
    mem: BrainMem = mem_factory(clock=lambda: T0 + 86400)
    items = [ObservationInput(r.text, stamp=r.stamp, episode_id=r.episode_id) for r in routine(1000)]
    templates = ('Put the {} on the stove in the kitchen.', 'Carried the {} from the kitchen to the stove.',
                 'Saw the {} on the stove.')
    items += [ObservationInput(templates[i % 3].format(THINGS[i % len(THINGS)]), stamp=T0 + 60 * i,
                               episode_id=f'stove-{i // 12}') for i in range(30)]
    for start in range(0, len(items), 64):
        for result in mem.store_many(items[start:start + 64]):
            assert not isinstance(result, Exception), result
    lesson = mem.store('I touched the stove while it was hot and my gripper sensor overheated.',
                       stamp=T0 + 50, episode_id='cook', type='outcome')
    mem.retriever.config = dataclasses.replace(mem.config.retrieval, lexical_places=share)
    hits = mem.retrieve('clean the stove', goal='clean the kitchen', top_k=10)
    assert (lesson.id in [h.unit.id for h in hits]) == (share > 0.0)
    if share:
        placed = [h.parts.lexical for h in hits if 'stove' in word_roles(h.unit.text).places - word_roles(
            h.unit.text).things]
        assert placed and max(placed) < next(h.parts.lexical for h in hits if h.unit.id == lesson.id)
