"""Entity names and the core's word lists (``brainmem_ros/data/fact_words.txt``)."""

from __future__ import annotations

import doctest

import pytest

from brainmem_ros.memory import entity_names, wordlists
from brainmem_ros.memory.entity_names import entity_key, find_name, name_words, text_words
from brainmem_ros.memory.types import Entity


def test_docstring_examples_run() -> None:
    for module in (entity_names, wordlists):
        result = doctest.testmod(module)
        assert result.attempted >= 1 and result.failed == 0, module.__name__


def test_fact_words_sections() -> None:
    sections = wordlists.sections('fact_words.txt')
    assert set(sections) == {'determiners', 'copulas', 'negations', 'spatial prepositions', 'name articles',
                             'message tags', 'trailing qualifiers', 'displays', 'same things', 'containers',
                             'opened by a door'}
    assert sections['name articles'] == {'the', 'a', 'an', 'my', 'its'}  # normalise_name's
    assert all(sections.values())
    assert "'s" in sections['copulas'] and 'the' in sections['determiners']
    with pytest.raises(KeyError, match='no section'):
        wordlists.word_list('fact_words.txt', 'adverbs')


def test_names_drop_determiners_and_possessive_s() -> None:
    assert name_words("Those robot's keys") == ['robot', 'keys']
    assert entity_key('my Keys') == entity_key('the key') == 'key'
    words = text_words('The keys\u2019re on the two mugs.')
    assert find_name(words, name_words('the mug')) == (5, 6)
    assert find_name(words, []) is None


def test_fallback_locations_read_the_word_lists() -> None:
    from brainmem_ros.memory.facts import fallback_locations

    things = [Entity('mug'), Entity('shelf')]
    assert fallback_locations('The mug sits on their shelf.', things) == [('mug', 'shelf')]
    assert fallback_locations('The mug is never on the shelf.', things) == []
    assert fallback_locations('The mug is near the shelf.', things) == [('mug', 'shelf')]


def test_referents_shorter_names_and_their_siblings() -> None:
    from brainmem_ros.memory.entity_names import referents
    # A log's ``bottle_blue`` is the blue water bottle; ``bottle_steel`` is another bottle.
    assert referents('the blue water bottle', ['bottle blue', 'bottle steel']) == ['bottle blue']
    # "phone" may be the black one: not an answer about the silver phone.
    assert referents('silver phone', ['phone', 'silver phone', 'black phone']) == ['silver phone']
    # Two shorter names of the one thing asked for both count.
    assert referents('black tv remote', ['remote', 'tv remote', 'black tv remote']) == [
        'black tv remote', 'remote', 'tv remote']
    assert referents('big blue remote', ['blue remote', 'red remote']) == ['blue remote']


def test_a_name_no_key_matches_finds_the_closest_of_its_head() -> None:
    from brainmem_ros.memory.entity_names import referents
    # The only vase known, however it was described.
    assert referents('the tulip vase', ['glass vase', 'tulip']) == ['glass vase']
    # The helmet sharing the most words, beside another.
    assert referents('red bike helmet', ['red bicycle helmet', 'black bicycle helmet']) == [
        'red bicycle helmet']
    # A colour that contradicts, or a tie: nothing.
    assert referents('red cup', ['blue cup']) == []
    assert referents('tall lamp', ['desk lamp', 'floor lamp']) == []


def test_plurals_in_ves_of_a_singular_in_f_match_it() -> None:
    # "the white tin loaves" asked of what the parser filed as "white tin loaf"; "gloves" is regular.
    assert entity_names.names_match('the white tin loaves', 'white tin loaf')
    assert entity_key('the kitchen knives') == entity_key('kitchen knife')
    assert entity_names.singular('gloves') == 'glove' and entity_names.singular('stoves') == 'stove'
