"""Synonym groups from WordNet: what a query word may also be written as."""

from __future__ import annotations

from brainmem_ros.memory.entity_names import aliases
from brainmem_ros.memory.synonyms import alternatives, groups, synonym_phrases


def test_a_word_is_grouped_only_by_its_most_frequent_sense_of_a_thing_or_act() -> None:
    assert ('clothes basket', 'clothes hamper', 'laundry basket') in groups('n')
    assert ('hoover', 'vacuum', 'vacuum-clean') in groups('v')
    # "patch" is first a small area, only fifth a bandage; "go" is first a journey.
    assert 'patch' not in alternatives('a bandage for the cut').get('bandage', ())
    assert alternatives('did she go home') == {}


def test_two_word_names_are_looked_up_before_their_words_and_plurals_by_their_singular() -> None:
    assert alternatives('Where is the clothes hamper?') == {
        'clothes hamper': ('clothes basket', 'laundry basket')}
    assert 'couch' in alternatives('the sofas in the lounge')['sofas']


def test_phrases_leave_out_what_the_query_already_says() -> None:
    found = synonym_phrases('my glasses or my specs', ['glasses', 'specs'])
    assert ('specs', 'glasses') not in found
    assert ('spectacles', 'glasses') in found


def test_facts_find_a_thing_by_a_wordnet_synonym_but_not_by_a_plural_only_name() -> None:
    assert 'laundry basket' in aliases('the clothes hamper')
    # "glasses" is left out of the facts' names: its singular is a drinking glass.
    assert 'spectacles' not in aliases('glass')


def test_a_verb_finds_its_instruments_but_an_instrument_not_its_verb() -> None:
    assert ('charge', 'charger') in groups('i')
    assert 'charger' in alternatives('charge the vacuum')['charge']
    assert 'cleaner' in alternatives('cleaning the floor')['cleaning']  # by the verb's ending
    assert 'opener' in alternatives('open the garage')['open']
    assert 'refrigerator' in alternatives('refrigerate the leftovers')['refrigerate']
    assert alternatives('the charger is broken') == {}
    # Instruments are not synonyms: the facts' names do not take them.
    assert 'charger' not in aliases('charge')
