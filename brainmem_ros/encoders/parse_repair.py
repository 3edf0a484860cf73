"""Trees the small parser gets wrong: a verb of posture, or a resulting state, read as the
head of a noun phrase.

In "a red helmet lying on a lawn" and "a red helmet rests on a lawn" the tagger of the
small English pipeline reads "lying" and "rests" as nouns, with "helmet" as their
modifier (a "helmet lying", like a "helmet strap"); every reader then sees one thing named
"red helmet lying" and no place. Captions and robot logs are full of such phrases, so
the tree is mended once, right after parsing, where the shape is unambiguous: a posture
form that is a noun only by this misreading ("lying", "rests"), a nominal right before it
that it governs, and a resting phrase after it ("on a lawn"). The "-ing" form becomes a
participle of the thing ("helmet" <- "lying", as in "a dog lying on the rug"), the "-s"
form the verb of a clause whose subject is the thing; either gets its verb's lemma, which
the readers ask ("hanging from the rail"). "a phone charging on the desk" is mended the same
way, and so is "cracked the window open", where "open" was read as the object's head, and "a
bedroom with a backpack slung over the chair", where "slung" was read as the bedroom's verb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brainmem_ros.encoders.lexicon import NOUN_TYPES, WORKING, time_word
from brainmem_ros.encoders.name_repair import adopt_left, mend_cans, mend_names, mend_states

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Forms of the verbs a thing rests by, or of a device's charging; as nouns they name no
# household thing.
_BASES = {'lie': ('lying', 'lies'), 'rest': ('resting', 'rests'), 'sit': ('sitting', 'sits'),
          'stand': ('standing', 'stands'), 'hang': ('hanging', 'hangs'), 'lean': ('leaning', 'leans'),
          'perch': ('perching', 'perches'), 'charge': ('charging', '')}
_PARTICIPLES = {ing: base for base, (ing, _) in _BASES.items()}
_PRESENT = {s: base for base, (_, s) in _BASES.items() if s}
# States an act leaves a thing in, said after it ("pushed the door open"); never nouns.
_RESULTS = frozenset({'open', 'shut', 'closed', 'ajar'})
# Words of how far a state holds ("half open", "wide open").
_DEGREE_WORDS = frozenset({'half', 'wide', 'partly', 'partially', 'fully'})
# Verbs whose "on"/"off" right after them is a particle of switching ("switched off the fan").
_SWITCHING = frozenset({'switch', 'turn', 'flip', 'flick', 'power', 'click'})
# Prepositions a resting phrase opens with ("next to": "next" hangs on the verb).
_RESTING = frozenset({'on', 'in', 'under', 'by', 'beside', 'against', 'from', 'near', 'next', 'inside',
                      'behind', 'atop', 'underneath', 'beneath', 'across', 'along', 'over', 'at'})


def mend(doc: Doc, nouns_only: frozenset[str]) -> Doc:
    """``doc`` with the misreadings of the module mended: a posture verb read as a noun made a
    verb again, a resulting state read as the object's head a state, a scene's participle read
    as the scene's verb the participle of the thing the scene is "with", a household noun
    read as a verb after a noun the head of its name again, one that opens a fragment ("towel
    on the floor") its thing, and a name set off before the subject whom it addresses."""
    mend_names(doc)
    mend_cans(doc)
    mend_states(doc)
    _mend_vocatives(doc)
    _mend_nominals(doc)
    _mend_subjects(doc)
    _mend_participles(doc)
    _mend_degrees(doc)
    _mend_agreement(doc)
    _mend_fragments(doc)
    _mend_objects(doc)
    _mend_particles(doc)
    _mend_results(doc)
    _mend_parallels(doc)
    _mend_postures(doc)
    _mend_scenes(doc)
    _mend_working(doc)
    for tok in doc:
        low = tok.lower_
        if tok.pos_ != 'NOUN' or (low not in _PARTICIPLES and low not in _PRESENT) or tok.i == 0:
            continue
        thing = doc[tok.i - 1]
        if thing.head.i != tok.i or thing.dep_ not in {'compound', 'amod'} or not (
                thing.pos_ in {'NOUN', 'PROPN'} or thing.lower_ in nouns_only):
            continue
        # (Or a state right after it: "a dishwasher standing open".)
        if not any((c.i > tok.i and c.lower_ in _RESTING) or (c.i == tok.i + 1 and c.lower_ in _RESULTS)
                   for c in tok.children):
            continue
        if low in _PRESENT and tok.dep_ != 'ROOT':
            continue  # a clause's verb only where the parse has no other
        _rehang(tok, thing, participle=low in _PARTICIPLES)
        tok.lemma_ = _PARTICIPLES.get(low) or _PRESENT[low]
    return doc


def _rehang(verb: Token, thing: Token, *, participle: bool) -> None:
    adopt_left(verb, thing)
    if thing.pos_ not in {'NOUN', 'PROPN'}:
        thing.pos_, thing.tag_ = 'NOUN', 'NN'  # "the lasagne resting": tagged an adjective
    if participle:
        thing.dep_ = verb.dep_
        thing.head = thing if verb.head.i == verb.i else verb.head
        verb.head = thing
        verb.dep_, verb.tag_ = 'acl', 'VBG'
    else:
        thing.dep_ = 'nsubj'
        verb.tag_ = 'VBZ'
    verb.pos_ = 'VERB'


def _mend_results(doc: Doc) -> None:
    """"cracked the window open": "open" read as the object (a "window open"), the window as
    its modifier; the window is the object, "open" the state the act leaves it in. So with
    "with": "a bedroom with the window open" is with the window, which is open."""
    for tok in doc:
        state = tok.pos_ == 'NOUN' and tok.lower_ in _RESULTS
        thing = doc[tok.i - 1] if tok.i else tok
        if state and tok.dep_ == 'pobj' and tok.head.lower_ == 'with' and thing.head.i == tok.i \
                and thing.dep_ == 'compound' and thing.pos_ == 'NOUN':
            adopt_left(tok, thing)
            thing.head, thing.dep_ = tok.head, 'pobj'
            tok.head, tok.dep_, tok.pos_, tok.tag_ = thing, 'amod', 'ADJ', 'JJ'
            continue
        doing = tok.tag_ == 'VBG'  # "left the tap running": a "tap running", read as the object
        if not (state or doing) or tok.dep_ != 'dobj' or tok.i == 0:
            continue
        thing = doc[tok.i - 1]
        if state and thing.i == tok.head.i and thing.tag_ in {'VBD', 'VBN'}:
            # "an umbrella folded shut", "curtains drawn shut": the state the act leaves its
            # subject in, right after the verb (no thing between to be its object).
            tok.dep_, tok.pos_, tok.tag_ = 'oprd', 'ADJ', 'JJ'
            continue
        if thing.head.i != tok.i or thing.dep_ != 'compound' or thing.pos_ != 'NOUN':
            continue
        verb = tok.head
        adopt_left(tok, thing)
        thing.head, thing.dep_ = verb, 'dobj'
        if doing:
            tok.head, tok.dep_ = thing, 'acl'
        else:
            tok.head, tok.dep_ = verb, 'oprd'
            tok.pos_, tok.tag_ = 'ADJ', 'JJ'


def _mend_parallels(doc: Doc) -> None:
    """"switched on the red lamp on the study desk and the white lamp in the hallway": the white
    lamp joined to the desk, the nearer noun; a noun of the same word as the act's object before
    that place is a second object (the white lamp was switched on too), not a second place."""
    for tok in doc:
        place = tok.head
        if tok.dep_ != 'conj' or tok.pos_ not in {'NOUN', 'PROPN'} or place.dep_ != 'pobj' \
                or place.head.dep_ != 'prep':
            continue
        first = next((t for t in doc[:place.head.i] if t.lower_ == tok.lower_ and t.dep_ in {'dobj', 'pobj'}
                      and t.head.i in {place.head.head.i, *(c.i for c in place.head.head.children)}), None)
        if first is not None:
            tok.head = first


def _mend_postures(doc: Doc) -> None:
    """"a black remote lying in the fruit bowl": "lying" tagged a noun that the tree has as the
    thing's participle, and the thing ("remote") an adjective heading its own determiner: the
    participle of a resting verb before a place is a verb, and a household noun so placed a noun."""
    for tok in doc:
        thing = tok.head
        if tok.lower_ not in _PARTICIPLES or tok.pos_ != 'NOUN' or tok.dep_ != 'acl' or thing.i >= tok.i \
                or not any(c.i > tok.i and c.lower_ in _RESTING for c in tok.children):
            continue
        tok.pos_, tok.tag_, tok.lemma_ = 'VERB', 'VBG', _PARTICIPLES[tok.lower_]
        determined = any(c.dep_ == 'det' for c in thing.children)
        if thing.pos_ == 'ADJ' and thing.lower_ in NOUN_TYPES and determined:
            thing.pos_, thing.tag_ = 'NOUN', 'NN'


def _mend_working(doc: Doc) -> None:
    """"a television showing cartoons" read as one name of three nouns (the television and
    "showing" modifiers of "cartoons"): the television is the thing, showing its participle,
    the cartoons what it shows."""
    for tok in doc:
        if tok.tag_ != 'VBG' or tok.lemma_.lower() not in WORKING or tok.dep_ not in {'compound', 'amod'} \
                or tok.i == 0:
            continue
        thing, shown = doc[tok.i - 1], tok.head
        if thing.dep_ != 'compound' or thing.pos_ != 'NOUN' or thing.head.i not in {tok.i, shown.i} \
                or shown.i <= tok.i or shown.pos_ != 'NOUN':
            continue
        adopt_left(shown, thing)
        thing.dep_, thing.head = shown.dep_, thing if shown.head.i == shown.i else shown.head
        tok.head, tok.dep_, tok.pos_ = thing, 'acl', 'VERB'
        shown.head, shown.dep_ = tok, 'dobj'


def _mend_scenes(doc: Doc) -> None:
    """"a bedroom with a backpack slung over the chair": the participle read as the verb of
    the scene ("a bedroom ... slung"), the thing it is "with" right before it; the participle
    is the thing's, and the scene a caption's noun phrase again."""
    for verb in doc:
        thing = doc[verb.i - 1] if verb.i else verb
        if verb.tag_ not in {'VBN', 'VBG', 'VBD'} or thing.dep_ != 'pobj' or thing.head.lower_ != 'with' \
                or any(c.dep_ in {'aux', 'auxpass', 'dobj'} for c in verb.children):
            continue
        scene = thing.head.head
        if verb.dep_ == 'acl' and verb.head.i == scene.i and verb.tag_ != 'VBD':
            verb.head = thing  # "a sink with the faucet running into a pot": the faucet runs
            continue
        # (A past form too, without an object: the tagger reads "raised" in "blinds raised open"
        # as one.)
        if verb.dep_ != 'ROOT' or not any(c.i == scene.i and c.dep_ == 'nsubj' for c in verb.children) \
                or scene.pos_ not in {'NOUN', 'PROPN'}:
            continue
        scene.head, scene.dep_ = scene, 'ROOT'
        adopt_left(verb, scene)
        verb.head, verb.dep_ = thing, 'acl'
        verb.tag_ = 'VBN' if verb.tag_ == 'VBD' else verb.tag_


def _mend_nominals(doc: Doc) -> None:
    """"hid the birthday presents in the wardrobe": "presents" tagged a verb ("he presents")
    where the tree has it as a noun phrase's head, the verb's object with its determiner (on
    it, or on the word before it: "handed me the house keys" hangs "the" on "house"); a
    verb never fills that place, so the tag is the one mistake."""
    for tok in doc:
        # (A subject so tagged is more often the sentence's verb, misread: "A black umbrella
        # leans against the coat stand" with "stand" for the verb.)
        if tok.pos_ != 'VERB' or tok.tag_ not in {'VBZ', 'VBP'} or tok.dep_ not in {'dobj', 'pobj'} \
                or tok.lower_ in _PRESENT \
                or not any(c.dep_ in {'det', 'poss'} and c.i < tok.i for c in tok.subtree) \
                or any(c.dep_ in {'nsubj', 'dobj', 'aux', 'auxpass', 'prt'} for c in tok.children):
            continue
        tok.pos_, tok.tag_ = 'NOUN', 'NNS' if tok.tag_ == 'VBZ' else 'NN'


def _mend_subjects(doc: Doc) -> None:
    """"Dan borrowed the spare key": the name right before a verb that has no subject read as a
    phrase of time ("Monday I went"), which a name before its verb, with nothing between, is not."""
    for tok in doc[:-1]:
        verb = doc[tok.i + 1]
        if tok.pos_ == 'PROPN' and tok.dep_ == 'npadvmod' and tok.head.i == verb.i \
                and not time_word(tok.lower_) and verb.tag_ in {'VBD', 'VBZ'} \
                and not any(c.dep_ in {'nsubj', 'nsubjpass'} for c in verb.children):
            tok.dep_ = 'nsubj'


def _mend_participles(doc: Doc) -> None:
    """"a garage with a car parked and tools hanging on the wall": "hanging" hung on the car,
    which has a participle of its own ("parked"), across "tools" joined to it right before; a
    participle there is the nearer noun's."""
    for tok in doc[1:]:
        noun, prev = tok.head, doc[tok.i - 1]
        if tok.dep_ == 'acl' and tok.tag_ in {'VBG', 'VBN'} and prev.dep_ == 'conj' \
                and prev.head.i == noun.i and prev.pos_ in {'NOUN', 'PROPN'} \
                and any(c.dep_ == 'acl' and c.i < prev.i for c in noun.children):
            tok.head = prev


def _mend_degrees(doc: Doc) -> None:
    """"with the blinds half open": "half" tagged a noun, and read as the head of a name
    ("blinds half"); it says how far the state holds."""
    for tok in doc:
        if tok.lower_ in _DEGREE_WORDS and tok.dep_ == 'appos' and 0 < tok.i + 1 < len(doc) \
                and doc[tok.i + 1].head.i == tok.i and doc[tok.i + 1].pos_ == 'ADJ' and tok.head.i < tok.i:
            # "a glass coffee pot half full": "half" read as a second name of the pot, "full" as
            # its modifier; the pot is half full.
            state = doc[tok.i + 1]
            state.head, state.dep_ = tok.head, 'amod'
            tok.head, tok.dep_, tok.pos_, tok.tag_ = state, 'advmod', 'ADV', 'RB'
            continue
        if tok.lower_ not in _DEGREE_WORDS or tok.pos_ not in {'NOUN', 'ADV'} \
                or tok.dep_ not in {'advmod', 'npadvmod'} or tok.i + 1 == len(doc) \
                or doc[tok.i + 1].pos_ not in {'ADJ', 'VERB'} or tok.i == 0:
            continue
        tok.pos_, tok.tag_ = 'ADV', 'RB'
        # "with the drawer half open": the drawer, read as a modifier of "half", is the
        # object of the preposition before it.
        thing = doc[tok.i - 1]
        prep = next((t for t in reversed(doc[:thing.i]) if t.pos_ == 'ADP'), None)
        if thing.head.i == tok.i and NOUN_TYPES.get(thing.lower_) is not None and prep is not None \
                and not any(c.dep_ == 'pobj' for c in prep.children) \
                and all(t.dep_ == 'det' for t in doc[prep.i + 1:thing.i]):
            thing.head, thing.dep_, thing.pos_, thing.tag_ = prep, 'pobj', 'NOUN', 'NN'


def _mend_vocatives(doc: Doc) -> None:
    """"Sam, the door is locked": the name a sentence opens with, set off by a comma, read as a
    second subject of the verb whose subject follows; it is whom the sentence addresses, as
    the parser reads "Mom, the oven is on"."""
    subjects = {'nsubj', 'nsubjpass'}
    for tok in doc[:-2]:
        opens = tok.i == tok.sent.start or doc[tok.i - 1].text == ':'  # (after a speaker's name)
        if opens and tok.pos_ == 'PROPN' and tok.dep_ in subjects and doc[tok.i + 1].text == ',' \
                and any(c.dep_ in subjects and c.i > tok.i + 1 for c in tok.head.children):
            tok.dep_ = 'npadvmod'


def _mend_fragments(doc: Doc) -> None:
    """"towel on the floor", a detector's or a caption's fragment: the bare household noun that
    opens it read as an order ("towel the floor"); with a resting phrase right after it and
    nothing else on it, it is the fragment's thing, as "a towel on the floor" is parsed."""
    tok = doc[0] if len(doc) > 2 else None
    if tok is None or tok.tag_ != 'VB' or tok.dep_ != 'ROOT' or NOUN_TYPES.get(tok.lower_) is None \
            or doc[1].lower_ not in _RESTING or doc[1].head.i != 0 \
            or any(c.dep_ not in {'prep', 'punct', 'cc', 'conj'} for c in tok.children):
        return
    tok.pos_, tok.tag_, tok.lemma_ = 'NOUN', 'NN', tok.lower_


def _mend_agreement(doc: Doc) -> None:
    """"a bathroom sink with a running tap": "sink" read as the verb of "a bathroom", which no
    verb without its "-s" agrees with; a household noun there is the head of the name."""
    for tok in doc:
        prev = doc[tok.i - 1] if tok.i else tok
        if tok.pos_ != 'VERB' or tok.tag_ not in {'VB', 'VBP'} or NOUN_TYPES.get(tok.lower_) is None \
                or prev.dep_ != 'nsubj' or prev.head.i != tok.i or prev.tag_ != 'NN' \
                or not any(c.dep_ == 'det' and c.lower_ in {'a', 'an', 'the'} for c in prev.children):
            continue
        adopt_left(prev, tok)
        prev.dep_ = 'compound'
        tok.pos_, tok.tag_, tok.lemma_ = 'NOUN', 'NN', tok.lower_


def _mend_objects(doc: Doc) -> None:
    """"I found the TV remote under the sofa": the object read as a clause of the verb (a
    noun as its ``ccomp``), the verb left without an object; it is the verb's object. In "found
    the car keys in the garden" the first word of the name was also read as the clause's subject
    ("the car" keys): it is a word of the name."""
    for tok in doc:
        verb = tok.head
        if tok.pos_ != 'NOUN' or tok.dep_ not in {'ccomp', 'xcomp'} or verb.pos_ != 'VERB' or verb.i > tok.i \
                or any(c.dep_ in {'dobj', 'obj'} for c in verb.children):
            continue
        first = doc[tok.i - 1]
        if first.head.i == tok.i and first.dep_ == 'nsubj' and first.pos_ == 'NOUN':
            first.dep_ = 'compound'
            adopt_left(first, tok)  # "the" is the name's
        if not any(c.dep_ in {'det', 'poss'} for c in tok.children) \
                or any(c.dep_ in {'dobj', 'nsubj', 'aux', 'cop'} for c in tok.children):
            continue
        tok.dep_ = 'dobj'


def _mend_particles(doc: Doc) -> None:
    """"I switched off the fan in the bedroom": "off" read as a preposition with the fan its
    object, as the parser reads "turned off the lamp" right (a particle, and the lamp the
    verb's object); the fan is the verb's object, and "in the bedroom" where it is."""
    for tok in doc[1:]:
        verb = doc[tok.i - 1]
        if tok.lower_ not in {'on', 'off'} or tok.dep_ != 'prep' or tok.head.i != verb.i \
                or verb.pos_ != 'VERB' or verb.lemma_ not in _SWITCHING \
                or any(c.dep_ in {'dobj', 'obj'} for c in verb.children):
            continue
        thing = next((c for c in tok.children if c.dep_ == 'pobj'), None)
        if thing is None:
            continue
        tok.dep_, tok.pos_, tok.tag_ = 'prt', 'ADP', 'RP'
        thing.dep_, thing.head = 'dobj', verb
