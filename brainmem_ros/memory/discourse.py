"""What an utterance says of a thing it names only by a pronoun, from the ones before it.

People talk in turns: "Lucía: I've put my passport in the desk drawer." then "Lucía: Hmm,
actually, it's in my backpack." The second says where the passport is, but names it only
"it"; read alone (as the extractor reads each observation) it places nothing. Here the
observations told just before in the same episode supply the thing.

Only for a place or a plain state: an utterance that places nothing itself, with "it",
"they" or "them" before a preposition of place and a thing it names ("it's in my backpack",
"I'm leaving them on the kitchen table"), or "it's" before a word of a door's or a device's
state ("No, it's still open"). Negations, questions, plans and conditions state nothing
("it's not there", "is it in the car?", "I'll put it on the shelf"). The thing is that of
the nearest of the last few utterances that names one: the last thing it placed or, failing
that, the thing it asked about ("Did you close the skylight?" "No, it's still open"; "Where's
the remote?" "Not here." "Oh, it's under the cushion"), or the last it said anything of. A
bare yes answers the question just before it: "Did you lock the shed?" "Yes." (the state
the act leaves), "Is the gate open?" "Yep." (the state asked about). Such a claim is a
``fallback``: less sure than what a sentence says outright.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from brainmem_ros.encoders.lexicon import COMPARTMENTS, done_states, participle_states, past_forms
from brainmem_ros.memory.entity_names import DETERMINERS, find_name, name_words, speaker, text_words
from brainmem_ros.memory.facts import CONFIDENCE, HOLDER, LOCATION, Claim, claims_of
from brainmem_ros.memory.types import MemoryUnit, unowned

_PRONOUNS = frozenset({'it', "it's", 'they', "they're", 'them'})
# The speaker's own one of the thing talked about ("Mine are in my jacket pocket").
_MINE = frozenset({'mine', "mine's"})
_PLACE_PREPS = frozenset({'in', 'on', 'under', 'inside', 'into', 'onto', 'behind', 'beside', 'by', 'at',
                          'near', 'underneath', 'beneath'})
# Words that make a clause no statement of where a thing is now.
_NOT_SO = re.compile(r"(?:\b(?:not|no|never|will|going|gonna|should|might|maybe|if|when|can|could|would|"
                     r"where|did|does|do)\b|n't\b|'ll\b)", re.IGNORECASE)
_SENTENCE = re.compile(r'[^.!?]+[.!?]?')
# States a door or a device is in, said of "it" ("it's still open"); not the weather's ("it's
# cold"), nor a judgement ("it's fine", "it's done").
_STATES = frozenset({'open', 'closed', 'shut', 'ajar', 'locked', 'unlocked', 'on', 'off', 'empty', 'full',
                     'broken', 'stuck', 'jammed', 'blocked', 'charged', 'plugged', 'unplugged'})
# Switched on or off; the other acts done to "it" are lexicon.done_states ("I've locked it").
_SWITCHED = frozenset({'turned', 'switched', 'flicked'})
_SWITCH_BASES = frozenset({'turn', 'switch', 'flick'})
# A bare yes, and the words that take it back ("yes, but not the back one").
_YES = frozenset({'yes', 'yeah', 'yep', 'yup', 'done'})
# What says a requested act is done ("Can you lock it?" "Done."), and the words that request.
_DONE = frozenset({'done', 'did', 'finished'})
_ASKING = frozenset({'can', 'could', 'would', 'will'})
_DENIED = frozenset({'not', 'no', 'never', 'but'})
# Acts after which who speaks has "it" ("Got them, thanks").
_TAKEN = frozenset({'got', 'grabbed', 'took', 'have', 'fetched'})
# Words an answer that names only a place may open with ("back in the drawer").
_FRAGMENT_LEAD = frozenset({'back', 'still', 'just', 'right', 'over', 'up', 'down', 'there', 'oh', 'yes',
                            'yeah', 'now'})
_STILL = frozenset({'still', 'now', 'already', 'all', 'just', 'definitely'})
# "it's on top of ...", "it's off the table": a place, not a state.
_NOT_A_THING = frozenset({'top', 'the', 'a', 'my', 'your', 'his', 'her', 'our', 'their', 'to', 'of'})
#: Turns back the thing of a pronoun is sought in.
TURNS = 4
# At most this many words between the pronoun and its preposition ("them right on the table").
_GAP = 4


def told_of(unit: MemoryUnit, own: Sequence[Claim],
            earlier: Callable[[], Sequence[MemoryUnit]]) -> list[Claim]:
    """Claims of where the thing of an earlier unit of the episode is, or what state it is in,
    when ``unit`` names it only by a pronoun (see the module); none otherwise. ``own``:
    ``unit``'s claims; ``earlier`` (the units told before it, newest first, at most
    :data:`TURNS`) is asked only when the unit may need it (a store read)."""
    if not unit.episode_id or any(c.attribute in (LOCATION, HOLDER) for c in own):
        return []  # no conversation, or the utterance placed something itself
    if (_PRONOUNS | _MINE) & set(text_words(unit.text)):
        place, mine = _place_after_pronoun(unit)
        place = place or _taken_by_speaker(unit)  # "Tom: Got them, thanks."
    else:
        place, mine = _fragment_place(unit), False  # "Back in the top drawer."
        if not place:
            return _confirmed(unit, earlier) if _affirms(unit) else []
    state = '' if place or own else _state_after_pronoun(unit) or _done_to_pronoun(unit)
    who = speaker(unit.text) if mine else ''
    if (not place and not state) or (mine and not who):
        return []
    # The nearest turn that names a thing: turns that name none ("No, it's not there") are
    # passed over, as a listener keeps the thing talked about in mind.
    thing = next((t for u in earlier() if u.episode_id == unit.episode_id and (t := _thing_of(u))), '')
    if not thing or thing == place:
        return []
    if who:
        # "Hannah: My car keys are on the hook." "Ravi: Mine are in my jacket." Ravi's car keys.
        thing = f"{who}'s {unowned(thing)}"
    attribute = LOCATION if place else 'power' if state in ('on', 'off') else 'state'
    return [Claim(thing, attribute, place or state, unit.stamp, unit.id, 'fallback', CONFIDENCE['fallback'],
                  unit.pose)]


def _affirms(unit: MemoryUnit) -> bool:
    """``unit`` is a bare yes ("Amy: Yes.", "Yes, I did.", "Yep, done")."""
    words = _spoken(text_words(unit.text), speaker(unit.text))
    return 0 < len(words) <= 4 and words[0] in _YES and not _DENIED & set(words) \
        and not any(w.endswith("n't") for w in words)


def _confirmed(unit: MemoryUnit, earlier: Callable[[], Sequence[MemoryUnit]]) -> list[Claim]:
    """A yes to the question just before ("Did you lock the shed?" "Yes."): the state the act
    asked about leaves its thing in, or the state asked about ("Is the gate open?")."""
    question = next((u for u in earlier() if u.episode_id == unit.episode_id), None)
    if question is None or not question.text.rstrip().endswith('?'):
        return []
    thing, (attribute, value) = _thing_of(question), _asked_state(question)
    if not thing or not value:
        return []
    if _requested(question) and not _DONE & set(text_words(unit.text)):
        return []  # "Can you close the garage door?" "Yes.": it will be, not it is
    return [Claim(thing, attribute, value, unit.stamp, unit.id, 'fallback', CONFIDENCE['fallback'],
                  unit.pose)]


def _asked_state(question: MemoryUnit) -> tuple[str, str]:
    """(attribute, value) a yes/no question asks of its thing: "did you lock ...", "have you
    switched off ...", "is the gate open?"; ('', '') for none."""
    for words in _sentences(question.text, asked=True):
        for i, word in enumerate(words):
            if word in {'did', 'have', 'has'} | _ASKING and i + 2 < len(words):
                verb, rest = words[i + 2], words[i + 3:i + 8]
                if verb in _SWITCH_BASES | _SWITCHED and ({'on', 'off'} & set(rest)):
                    return 'power', next(w for w in rest if w in {'on', 'off'})
                state = _left_by(verb)
                if state:
                    return 'state', state
            if word in {'is', 'are'}:
                said = next((w for w in words[i + 1:i + 7] if w in _STATES), '')
                if said:
                    value = participle_states().get(said, said)  # "is it shut?": closed
                    return ('power' if said in {'on', 'off'} else 'state'), value
    return '', ''


def _requested(question: MemoryUnit) -> bool:
    """``question`` asks for an act ("Can you close the garage door?"), not whether it was done."""
    return any(w in _ASKING and words[i + 1:i + 2] == ['you']
               for words in _sentences(question.text, asked=True) for i, w in enumerate(words))


def _thing_of(before: MemoryUnit) -> str:
    """The thing ``before`` placed last or, placing none, the first thing it asked about, or
    the last it said anything of; '' when it names none."""
    said = [c for c in claims_of(before) if c.source == 'text']
    placed = [c for c in said if c.attribute in (LOCATION, HOLDER)]
    if placed:
        return placed[-1].entity
    things = [e.name for e in before.entities if e.type not in ('person', 'place')]
    who = speaker(before.text)
    for sentence in _sentences(before.text, asked=True):
        words = _spoken(sentence, who)  # "Ines: Did you close ...": the speaker's name is no thing
        found = [(at[0], name) for name in things if (at := find_name(words, name_words(name)))]
        if found:
            return min(found)[1]
    return said[-1].entity if said else ''


def _state_after_pronoun(unit: MemoryUnit) -> str:
    """The state a statement of ``unit`` gives "it" ("it's still open", "it is off now"), or ''."""
    for words in _sentences(unit.text, asked=False):
        for i, word in enumerate(words):
            j = i + 1 if word == "it's" else i + 2 if word == 'it' and words[i + 1:i + 2] == ['is'] else 0
            while 0 < j < len(words) and words[j] in _STILL:
                j += 1
            if 0 < j < len(words) and words[j] in _STATES and not _NOT_SO.search(' '.join(words[i:j + 1])) \
                    and (j + 1 == len(words) or words[j + 1] not in _NOT_A_THING):
                return participle_states().get(words[j], words[j])  # "it's shut": closed
    return ''


def _done_to_pronoun(unit: MemoryUnit) -> str:
    """The state a statement of ``unit`` leaves "it"/"them" in by an act done to it ("Yes, I
    turned it off", "I've locked it"), or ''."""
    for verb, after in _acts_on_pronoun(unit.text):
        if verb in _SWITCHED and after in (['on'], ['off']):
            return after[0]
        if verb in done_states():
            return done_states()[verb]
    return ''


def _left_by(verb: str) -> str:
    """The state the act ``verb`` (its base or past form) leaves its thing in, as the parse of
    a sentence files it ("lock", "locked": locked; "shut": closed), or ''."""
    done = done_states()
    return done.get(verb) or next((done[p] for p in past_forms(verb) if p in done), '')


def _taken_by_speaker(unit: MemoryUnit) -> str:
    """The speaker, when what they say is that they took or have "it"/"them" ("Tom: Got them,
    thanks.", "Ana: I've grabbed it"); else ''."""
    who = speaker(unit.text)
    return who if who and any(verb in _TAKEN for verb, _ in _acts_on_pronoun(unit.text)) else ''


def _acts_on_pronoun(text: str) -> Iterator[tuple[str, list[str]]]:
    """The word before and the word after each "it"/"them" of a statement in ``text`` that no
    negation, plan or doubt among the two words before takes away (not a "No," answering the
    question before: "No, I switched it off an hour ago")."""
    for words in _sentences(text, asked=False):
        for i in range(1, len(words)):
            if words[i] in {'it', 'them'} and not _NOT_SO.search(' '.join(words[max(0, i - 2):i + 2])):
                yield words[i - 1], words[i + 1:i + 2]


def _place_after_pronoun(unit: MemoryUnit) -> tuple[str, bool]:
    """The thing a statement of ``unit`` names after "it/they/them" (or "mine") and a
    preposition of place, or '' (a question, a negation or a plan names none); and whether
    the pronoun was "mine"."""
    names = [e.name for e in unit.entities if e.type != 'person']
    found = '', False
    for words in _sentences(unit.text, asked=False):
        for i, word in enumerate(words):
            if word in _PRONOUNS | _MINE and (place := _place_from(words, i, names)) and place != found[0]:
                # The last place said is where the thing ends up ("it was on the washing
                # machine. I'm putting it in my coat pocket."); "mine, they're in my bag" is one.
                found = place, word in _MINE
    return found


def _spoken(words: list[str], who: str) -> list[str]:
    """A sentence's ``words`` without the name of ``who`` speaks opening them ("Ana: Yes.")."""
    return words[1:] if who and words[:1] == [who] else words


def _fragment_place(unit: MemoryUnit) -> str:
    """The place an answer with no verb names ("Tom: Back in the top drawer.", "On the
    stairs."), or ''."""
    names = [e.name for e in unit.entities if e.type != 'person']
    who = speaker(unit.text)
    for words in _sentences(unit.text, asked=False):
        k = len(words) - len(_spoken(words, who))
        while k < len(words) and words[k] in _FRAGMENT_LEAD:
            k += 1
        if k < len(words) and words[k] in _PLACE_PREPS and (place := _place_from(words, k - 1, names)):
            return place
    return ''


def _sentences(text: str, *, asked: bool) -> list[list[str]]:
    """The words of each sentence of ``text`` that asks (``asked``) or that does not."""
    return [text_words(s) for s in _SENTENCE.findall(text) if s.strip().endswith('?') == asked]


def _place_from(words: list[str], i: int, names: list[str]) -> str:
    """The place named by the first preposition of place within a few words after ``i``."""
    for j in range(i + 1, min(len(words), i + 2 + _GAP)):
        if words[j] not in _PLACE_PREPS:
            continue
        k = j + 1
        while k < len(words) and words[k] in DETERMINERS:
            k += 1
        clause = ' '.join(words[max(0, i - 3):k])
        for name in names:
            target = name_words(name)
            if target and find_name(words[k:k + len(target)], target) == (0, len(target)) \
                    and not _NOT_SO.search(clause):
                return _whole_of(words, k + len(target), name, names)
        return ''
    return ''


def _whole_of(words: list[str], k: int, part: str, names: list[str]) -> str:
    """"the drawer of my nightstand": the nightstand drawer, when ``part`` (named up to word
    ``k``) is a compartment and "of" a thing follows; else ``part``."""
    if part.rsplit(maxsplit=1)[-1] not in COMPARTMENTS or words[k:k + 1] != ['of']:
        return part
    k += 1
    while k < len(words) and words[k] in DETERMINERS:
        k += 1
    for name in names:
        target = name_words(name)
        if name != part and target and find_name(words[k:k + len(target)], target) == (0, len(target)):
            return f'{name} {part}'
    return part
