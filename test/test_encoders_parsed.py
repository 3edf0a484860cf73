"""The spaCy extractor (real en_core_web_sm model) on the error classes of the word-list rules."""

from __future__ import annotations

import pytest

from brainmem_ros.encoders.lexicon import stopwords
from brainmem_ros.encoders.parsed import SpacyExtractor
from brainmem_ros.memory.types import Outcome, StateChange


@pytest.fixture(scope='module')
def x() -> SpacyExtractor:
    return SpacyExtractor()


def _names(x: SpacyExtractor, text: str) -> set[str]:
    return {e.name for e in x.extract(text).entities}


@pytest.mark.parametrize(('text', 'name'), [
    ('He put the soldering iron back on the bench.', 'soldering iron'),
    ('Hand me the torque wrench, please.', 'torque wrench'),
    # The small tagger reads this "bed" as a verb; a base-form verb is never an object.
    ('The nurse pushed the hospital bed into ward 2.', 'hospital bed'),
    ('The salt shaker fell over.', 'salt shaker'),
])
def test_compounds_kept_whole(x: SpacyExtractor, text: str, name: str) -> None:
    assert name in _names(x, text)


def test_singular_from_the_lemma_and_titles_kept(x: SpacyExtractor) -> None:
    names = _names(x, 'I gave the tubes to Dr Chen.')
    assert 'tube' in names and 'tub' not in names
    assert 'dr chen' in names and 'dr' not in names and 'chen' not in names


def test_part_of_speech_from_the_parse(x: SpacyExtractor) -> None:
    got = x.extract('A golden retriever watches the door.')
    assert 'watch' in got.actions and 'watch' not in {e.name for e in got.entities}
    got = x.extract('Arrived at waypoint loading_bay_2.')
    assert 'load' not in got.actions and 'loading_bay_2' in {e.name.replace(' ', '_') for e in got.entities}


def test_robots_own_parts_are_not_entities(x: SpacyExtractor) -> None:
    names = _names(x, 'My gripper closed on the mug while the left wheel slipped and the camera froze.')
    assert names == {'mug'}


def test_configurable_self_vocabulary() -> None:
    assert 'mug' not in _names(SpacyExtractor(self_vocabulary=['mug']), 'The mug is on the table.')


def test_state_adjectives_are_not_actions(x: SpacyExtractor) -> None:
    got = x.extract('Door open, rack empty.')
    assert got.actions == ()
    assert StateChange('door', 'state', '', 'open') in got.state_changes


@pytest.mark.parametrize(('text', 'outcome'), [
    ('A wine glass chipped when I set it down.', Outcome.FAILURE),
    ('Localization lost in the corridor.', Outcome.FAILURE),
    ('The drive motor overheated.', Outcome.FAILURE),
    ('Could not open the jar.', Outcome.FAILURE),
    ('I carried the tray without spilling anything.', Outcome.UNKNOWN),
    ('It slipped twice, then the third grasp succeeded.', Outcome.SUCCESS),
    ('Goal reached.', Outcome.SUCCESS),
])
def test_outcome_cues_from_lemmas_and_negation(x: SpacyExtractor, text: str, outcome: Outcome) -> None:
    assert x.extract(text).outcome is outcome


def test_nav_log_behaviour_names(x: SpacyExtractor) -> None:
    assert 'navigate' in x.extract('NavigateToPose goal accepted.').actions
    got = x.extract('Called lift to floor 3.')
    assert 'call' in got.actions and 'lift' not in got.actions and 'floor 3' in {e.name for e in got.entities}


def test_location_from_the_parse(x: SpacyExtractor) -> None:
    got = x.extract('Moved the red cup from the shelf to the kitchen table.')
    assert StateChange('red cup', 'location', 'shelf', 'kitchen table') in got.state_changes


def test_batch_parse_gives_the_same_result(x: SpacyExtractor) -> None:
    texts = ['The kettle is on the stove.', 'I opened the fridge.']
    assert x.extract_many(texts) == [x.extract(t) for t in texts]


def test_one_stopword_list_shipped() -> None:
    assert {'the', 'path', 'something'} <= stopwords()


def test_identifier_after_a_mistagged_noun(x: SpacyExtractor) -> None:
    # The tagger reads "room"/"ward" after "to" as a verb; the code after it still names the place.
    assert 'room 118' in _names(x, 'Escorting the visitor to room 118 now.')
    assert 'bay 4' in _names(x, 'Pallet in bay 4 out of stock.')  # "4 out": no unit
    # A code between two nouns says which of the second it is: one name.
    assert _names(x, 'The bay 4 door is open.') == {'bay 4 door'}


def test_measure_of_a_thing_names_the_thing(x: SpacyExtractor) -> None:
    assert 'boiler' in _names(x, 'I checked the boiler pressure twice.')
    assert 'aquarium' in _names(x, 'The aquarium temperature is 24 C.')  # tagged as an adjective
    assert 'blood pressure monitor' in _names(x, 'Bring the blood pressure monitor.')


def test_state_and_reading_are_not_entities(x: SpacyExtractor) -> None:
    names = _names(x, 'Garage door ajar since noon (x=3.2, y=-1.0).')
    assert 'garage door' in names and not any('ajar' in n or '=' in n for n in names)


def test_noun_lemma_keeps_singular_nouns(x: SpacyExtractor) -> None:
    assert x.noun_lemma('glass') == 'glass' and x.noun_lemma('wine glasses') == 'wine glass'
    assert 'thermos' in _names(x, 'She filled both thermoses with tea.') or \
        'thermos' in _names(x, 'I filled the thermos with tea.')


def test_telegraphic_participle_and_agent_passive_are_events(x: SpacyExtractor) -> None:
    got = x.extract('Scanner disconnected at 09:14, retry scheduled.')
    assert 'disconnect' in got.actions
    assert 'block' in x.extract('Exit blocked by a trolley, rerouting.').actions
    assert 'block' not in x.extract('Exit blocked, rerouting.').actions


def test_lemma_with_doubled_consonant_is_repaired(x: SpacyExtractor) -> None:
    assert all(not a.endswith('nne') for a in x.extract('Replanning around the spill.').actions)


def test_aspect_verb_of_an_activity_is_not_an_action(x: SpacyExtractor) -> None:
    got = x.extract('Charging started at the dock.')
    assert 'start' not in got.actions


@pytest.mark.parametrize(('text', 'outcome'), [
    ('Tidy the hall before the visitors arrive.', Outcome.UNKNOWN),
    ('The courier arrived at the gate.', Outcome.UNKNOWN),
    ('Arrived at the pharmacy.', Outcome.SUCCESS),
    ('Good job, the floor is dry now.', Outcome.SUCCESS),
    ('Scanner disconnected during the inventory run.', Outcome.FAILURE),
])
def test_outcome_from_the_clause_it_is_in(x: SpacyExtractor, text: str, outcome: Outcome) -> None:
    assert x.extract(text).outcome is outcome


@pytest.mark.parametrize(('text', 'entities', 'action'), [
    ('Hung the car keys on the key hook.', {'car key', 'key hook'}, 'hang'),   # "Hung" read as a name
    ('The green watering can is on the patio.', {'green watering can', 'patio'}, ''),  # "can" as a modal
    ('The umbrella stand in the hallway is empty.', {'umbrella stand', 'hallway'}, ''),  # "stand" as a verb
])
def test_mistagged_words_repaired_by_the_clause(x: SpacyExtractor, text: str, entities: set[str],
                                                action: str) -> None:
    got = x.extract(text)
    assert {e.name for e in got.entities} == entities
    assert list(got.actions) == ([action] if action else [])


def test_a_batch_parse_reads_as_one_text_at_a_time() -> None:
    # The Store path parses a batch with nlp.pipe (prime); every extraction must be the one
    # a single parse gives (checked once on 3,110 texts: the labelled sets and LoCoMo turns).
    import json
    from pathlib import Path

    data = Path(__file__).parent / 'data'
    texts = [json.loads(line)['text'] for name in ('extraction_dev.jsonl', 'extraction_holdout.jsonl')
             for line in (data / name).read_text(encoding='utf-8').splitlines() if line.strip()]
    single = SpacyExtractor(cache_size=0)
    batched = SpacyExtractor(cache_size=len(texts))
    for start in range(0, len(texts), 64):
        batched.prime(texts[start:start + 64])
    assert [batched.extract(t) for t in texts] == [single.extract(t) for t in texts]


def test_an_acronym_with_a_determiner_is_a_thing(x: SpacyExtractor) -> None:
    # A bare acronym names software; "the TV" is a thing, with the state a switch gives it.
    got = x.extract('Turned on the TV.')
    assert [e.name for e in got.entities] == ['tv']
    assert [(c.object, c.attribute, c.after) for c in got.state_changes] == [('tv', 'power', 'on')]
    assert [e.name for e in x.extract('AMCL lost localization near the dock.').entities] == ['dock']


def test_a_preposition_of_several_words_names_no_thing(x: SpacyExtractor) -> None:
    assert [e.name for e in x.extract('The keys are on top of the fridge.').entities] == ['key', 'fridge']
    assert [e.name for e in x.extract('The dog lies in front of the door.').entities] == ['dog', 'door']
    # With a determiner the part is a place of its own.
    assert 'corner' in [e.name for e in x.extract('A box stands in the corner of the hall.').entities]
