"""The outcome the parser reads: what a clause says of its cue (real en_core_web_sm model).

A cue counts by what its clause says: a failure cue only when it happened, a success cue
or an arrival is a failure when the text says it did not happen (docs/extraction.md,
labelling guideline: "a negated cue does not count", "a negated ability is a failure").
"""

from __future__ import annotations

import pytest

from brainmem_ros.bags.episode import household_episode
from brainmem_ros.encoders.base import Extractor
from brainmem_ros.memory.defaults import default_extractor
from brainmem_ros.memory.types import Outcome, StateChange


@pytest.fixture(scope='module')
def x() -> Extractor:
    return default_extractor()


def test_demo_episode_outcomes(x: Extractor) -> None:
    # docs/bags.md: three failures (a dull knife, a shelf out of reach, a stuck latch) and
    # nothing else goes wrong; the last outcome step says the book was got down.
    failures = {s.text for s in household_episode().steps if x.extract(s.text).outcome is Outcome.FAILURE}
    assert failures == {
        'The knife was too dull to cut the bread.',
        'I could not reach the book: the high shelf is too high.',
        'The window latch is stuck and the window did not close.',
    }


@pytest.mark.parametrize('text', [
    'I could not reach the book.',
    "Couldn't reach the shelf.",
    "I can't reach the top shelf from here.",
    'The robot could not reach the goal.',
    'I was unable to reach the cupboard.',
    'Unable to dock.',
    'I was not able to reach the shelf.',
    "We weren't able to find the keys.",
    "I didn't manage to lift the box.",
    'Failed to reach the goal.',
    'I failed to complete the task.',
    'The cup could not be reached.',
    'Goal not reached.',
    'The robot did not arrive at the goal.',
    'Docking did not succeed.',
    "The robot can't open the fridge.",
])
def test_denied_ability_or_arrival_is_a_failure(x: Extractor, text: str) -> None:
    got = x.extract(text)
    assert got.outcome is Outcome.FAILURE and got.valence is not None and got.valence < 0


@pytest.mark.parametrize('text', [
    'Nothing was spilled.',
    'The milk is in the red cup and nothing was spilled.',
    'Nothing broke.',
    'I dropped nothing.',
    'No cups were dropped.',
    'Nobody was hurt.',
    'None of the glasses broke.',
    'Not one glass was chipped.',
    'I did not drop or spill anything.',
    'The robot did not get stuck.',
    'I slowed down to avoid a collision.',
    'The cup might fall off the table.',
    'If the door is stuck, call me.',
    'I caught the glass before it fell.',
    'Anna asked me to cancel the order.',
])
def test_a_failure_cue_that_did_not_happen_is_no_failure(x: Extractor, text: str) -> None:
    assert x.extract(text).outcome is not Outcome.FAILURE


@pytest.mark.parametrize('text', [
    'The knife was too dull to cut the bread.',
    'The box is too heavy for me to lift.',
    'The shelf was too far away to reach.',
    'I was too far from the shelf to reach the book.',
    'The jar lid was too tight to unscrew.',
    'The gripper was not strong enough to lift the box.',
    'The battery was too low to finish the patrol.',
])
def test_too_much_to_do_it_is_a_failure(x: Extractor, text: str) -> None:
    assert x.extract(text).outcome is Outcome.FAILURE


@pytest.mark.parametrize('text', [
    'The box was not too heavy to lift.',
    'The box might be too heavy to lift.',
    'The arm was long enough to reach the shelf.',
    'Opened the window because the room was too warm.',
    'I went to the kitchen to fetch the cup too.',
])
def test_degree_without_a_thwarted_act_is_no_failure(x: Extractor, text: str) -> None:
    assert x.extract(text).outcome is not Outcome.FAILURE


@pytest.mark.parametrize('text', [
    'I stood on the chair to reach the book.',
    'I climbed the ladder to reach the top shelf.',
    'I used the step stool in order to reach the cupboard.',
    'I moved the chair to complete the task.',
    'I tried to reach the goal.',
    'The robot is going to reach the dock.',
    'I will reach the goal in 5 minutes.',
    'I could reach the book from the chair.',
    'Please finish the dishes.',               # requests: nothing is done yet
    'Finish the dishes, then vacuum.',
    'Complete the inspection of the garage.',
])
def test_an_aim_or_a_possibility_is_no_success(x: Extractor, text: str) -> None:
    assert x.extract(text).outcome is Outcome.UNKNOWN


@pytest.mark.parametrize('text', [
    'I reached the goal.',
    'Goal reached.',
    'I stood on the chair and reached the book.',
    'Managed to reach the goal.',
    'I managed to open the jar.',
    'I was able to reach the book.',
    'Completed the patrol of the ground floor without any incidents.',
    'I tried to open the jar and succeeded.',
    'Finished the dishes.',                    # the tagger calls it "VB"; the word is past
    'Completed the inspection of the garage.',
])
def test_success_that_happened(x: Extractor, text: str) -> None:
    assert x.extract(text).outcome is Outcome.SUCCESS


@pytest.mark.parametrize(('text', 'outcome'), [
    ('The cup started to slip.', Outcome.FAILURE),          # an aspectual verb: it happened
    ('It must have fallen behind the sofa.', Outcome.FAILURE),
    ('I tried to grasp the cup and dropped it.', Outcome.FAILURE),
    ('The dishes are not done yet.', Outcome.UNKNOWN),      # under way, not failed
    ("Don't drop the vase.", Outcome.UNKNOWN),
    ('No obstacles detected.', Outcome.UNKNOWN),            # an empty scene, not a failed search
    ('Could not find the TV remote.', Outcome.FAILURE),
])
def test_what_happened_decides(x: Extractor, text: str, outcome: Outcome) -> None:
    assert x.extract(text).outcome is outcome


def test_without_negates_its_object_not_the_act(x: Extractor) -> None:
    # "without" as a preposition of the verb takes away its object ("any problem"), not the
    # closing, which stays a success cue's event and a state change.
    got = x.extract('Closed the garage door without any problem.')
    assert StateChange('garage door', 'state', '', 'closed') in got.state_changes
    assert x.extract('Carried the tray without spilling anything.').outcome is Outcome.UNKNOWN
