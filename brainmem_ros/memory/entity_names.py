"""Entity names as typed, and the key an entity is filed under.

Facts are filed by :func:`entity_key` ("The Blue Umbrellas" and "umbrella, blue" are one
entity); :func:`names_match` and :func:`referents` say which filed entities a name as typed
refers to; :func:`owner_of`, :func:`shown_by` and :func:`contents` say under which name a
text's claim is filed (Emma's bottle, the thermostat a display belongs to, what a bowl
holds). Pure rules over strings; the word lists are data (``brainmem_ros/data/fact_words.txt``:
determiners, message tags, trailing qualifiers, displays, names of the same thing).

>>> names_match('umbrellas', entity_key('the blue umbrella'))
True
>>> names_match('umbrella', entity_key('umbrella stand'))
False
>>> referents('the TV remote', ['remote', 'tv remote', 'tv'])
['remote', 'tv remote']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from brainmem_ros.memory.synonyms import groups as synonym_groups
from brainmem_ros.memory.types import normalise_name, speaker_label
from brainmem_ros.memory.wordlists import word_list

# Words that say whose or which thing, never what it is ("my keys" are the keys).
DETERMINERS = word_list('fact_words.txt', 'determiners')
# Qualifiers a software name puts after the thing's noun ("thermostat_hall").
TRAILING = word_list('fact_words.txt', 'trailing qualifiers')
# Parts that show their thing's state ("the thermostat display reads 20 degrees").
_DISPLAYS = word_list('fact_words.txt', 'displays')
# Things open or closed as their door or lid is.
_OPENED = word_list('fact_words.txt', 'opened by a door')
#: A thing's parts that open and close it: the state of a fridge's door is the fridge's.
OPENING_PARTS = frozenset({'door', 'lid'})
#: Things named by what they hold or are of ("basil pot", "basil plant").
CONTAINERS = word_list('fact_words.txt', 'containers')
# "Note: ..." opens a message without naming who speaks.
_MESSAGE_TAGS = word_list('fact_words.txt', 'message tags')
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# "the window in the bedroom": the thing, a preposition of where, the place.
_PLACED_AFTER = re.compile(r'^(.+?) (?:in|on|at|by) (.+)$')
_RAW_WORD = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:'[A-Za-z]+)?")
# Words before "'s" that own nothing: "It's", "That's", "Here's".
_NOT_OWNERS = frozenset({'it', 'that', 'this', 'there', 'here', 'what', 'who', 'where', 'he', 'she', 'let'})
# A speaker's name opening a transcribed utterance: "Priya: I moved my keys".
# One or two words before a colon; speaker_label says whether they name someone.
_SPEAKER = re.compile(r'^\s*([^\s:]+(?: [^\s:]+)?):\s')


# Plurals in "-ves" of a singular in "-f" or "-fe": a closed class ("gloves" and "stoves" are regular).
_VES = {'calves': 'calf', 'halves': 'half', 'hooves': 'hoof', 'knives': 'knife', 'leaves': 'leaf',
        'loaves': 'loaf', 'scarves': 'scarf', 'sheaves': 'sheaf', 'shelves': 'shelf', 'wives': 'wife',
        'wolves': 'wolf', 'wharves': 'wharf', 'lives': 'life', 'thieves': 'thief', 'elves': 'elf'}


def singular(word: str) -> str:
    """English noun singular by the regular suffix rules (keys → key, boxes → box)."""
    if len(word) <= 3 or word.endswith(('ss', 'us', 'is')) or not word.endswith('s'):
        return word
    if word.endswith('ies') and len(word) > 4:
        return word[:-3] + 'y'
    if word in _VES:
        return _VES[word]
    if word.endswith(('ches', 'shes', 'xes', 'zes', 'sses')):
        return word[:-2]
    return word[:-1]


def text_words(text: str) -> list[str]:
    """The lower-case words of ``text`` as names are matched in it (``'s`` kept on its word)."""
    return _WORD.findall(text.lower().replace('\u2019', "'"))


def name_words(name: str) -> list[str]:
    """The words of an entity's name, leading determiners and possessive ``'s`` removed."""
    words = _WORD.findall(normalise_name(name).replace('\u2019', "'"))
    while words and words[0] in DETERMINERS:
        words = words[1:]
    return [w[:-2] if w.endswith("'s") else w for w in words]


def find_name(words: Sequence[str], name: Sequence[str]) -> tuple[int, int] | None:
    """First occurrence ``(start, end)`` of ``name`` in ``words`` (the last word may be plural)."""
    n = len(name)
    if not n:
        return None
    for i in range(len(words) - n + 1):
        if list(words[i:i + n - 1]) == list(name[:-1]) and singular(words[i + n - 1]) == singular(name[-1]):
            return i, i + n
    return None


def speaker(text: str) -> str:
    """The name that opens ``text`` as its speaker's, lower case ('' if none).

    >>> speaker('Priya: I moved my keys.'), speaker('Lucía: in my bag'), speaker('Note: my keys')
    ('priya', 'lucía', '')
    """
    found = _SPEAKER.match(text)
    name = found.group(1) if found and speaker_label(found.group(1).split()) else ''
    return '' if name.lower() in _MESSAGE_TAGS else name.lower()


def shown_by(name: str) -> str:
    """The thing whose display ``name`` is, or ``name`` itself.

    >>> shown_by('the hallway thermostat display'), shown_by('display')
    ('hallway thermostat', 'display')
    """
    words = name_words(name)
    return ' '.join(words[:-1]) if len(words) > 1 and singular(words[-1]) in _DISPLAYS else name


def opened_by(name: str, state: str) -> str:
    """The thing a door or lid named ``name`` opens and closes, when ``state`` says it is open
    or closed; else ''.

    >>> opened_by('the fridge door', 'ajar'), opened_by('washing machine lid', 'closed')
    ('fridge', 'washing machine')
    >>> opened_by('garage door', 'open'), opened_by('fridge door', 'sticky')
    ('', '')
    >>> opened_by('compartment C2 door', 'open')
    'compartment c2'
    """
    words = name_words(name)
    owner = words[:-1]
    opening = state.split()[-1:] in (['open'], ['closed'], ['ajar'])
    kind = [w for w in owner if not any(c.isdigit() for c in w)][-1:]  # "compartment c2": a compartment
    door = bool(owner) and words[-1] in OPENING_PARTS and kind[0] in _OPENED if kind else False
    return ' '.join(owner) if opening and door else ''


def placed_first(name: str) -> str:
    """A name that says where its thing is after it, with the place first; ``name`` otherwise.

    >>> placed_first('the window in the bedroom'), placed_first('lamp on the landing'), placed_first('cup')
    ('bedroom window', 'landing lamp', 'cup')
    """
    found = _PLACED_AFTER.match(normalise_name(name))
    if not found:
        return name
    thing, place = name_words(found.group(1)), name_words(found.group(2))
    return ' '.join([*place, *thing]) if thing and place and len(place) <= 2 else name


def owner_of(text: str, name: str, speaker: str = '', people: Sequence[str] = ()) -> str:
    """Whose the thing ``name`` is, as ``text`` says it: the speaker's for "my X", Emma's for
    "Emma's X" (a capitalised name), for "her X" or "his X" the last of ``people`` (the
    persons the text names) named before it, and for "your X" the one of them the text
    addresses ("Ben, I took your keys"); '' when the text names no owner.

    >>> owner_of("Eli: my phone's on the couch", 'phone', 'eli'), owner_of("I filled Emma's bottle", 'bottle')
    ('eli', 'emma')
    >>> owner_of('Lena took her keys off the hook', 'key', people=['lena'])
    'lena'
    >>> owner_of("Anna: I've put your keys back, Ben.", 'key', 'anna', ['anna', 'ben'])
    'ben'
    """
    raw: list[str] = _RAW_WORD.findall(text.replace("\u2019", "'"))
    words, target = [w.lower().removesuffix("'s") for w in raw], name_words(name)
    for i in range(1, len(words)):
        if find_name(words[i:i + len(target)], target) is None:
            continue
        before = raw[i - 1]
        if before.lower() == 'my' and speaker:
            return speaker
        if before.lower() in {'her', 'his'}:
            named = [w for w in words[:i - 1] if w in people]
            if named:
                return named[-1]
        if before.lower() == 'your' and (addressed := addressee(text, people)):
            return addressed
        owner = before.removesuffix("'s")
        if owner != before and owner[:1].isupper() and owner.isalpha() and owner.lower() not in _NOT_OWNERS:
            return owner.lower()
    return ''


# A name set off by commas, or opening what is said: whom a sentence addresses.
_ADDRESSED = re.compile(r"(?:^|[:.!?]\s+|,\s*)([A-Z][a-z]+)\s*(?=,|[.!?]|$)")


def addressee(text: str, people: Sequence[str]) -> str:
    """The one of ``people`` that ``text`` addresses ("Ben, I took your keys", "I put them
    back, Ben."), or ''."""
    return next((n.lower() for n in _ADDRESSED.findall(text) if n.lower() in people), '')


def contents(text: str, name: str, candidates: Sequence[str]) -> list[str]:
    """The ``candidates`` that ``text`` says ``name`` holds: "a bowl of grapes", "the box of
    old cables" (wherever the bowl is, the grapes are).

    >>> contents('a bowl of grapes on the counter', 'bowl', ['grape', 'counter'])
    ['grape']
    """
    words, target = text_words(text), name_words(name)
    found = find_name(words, target)
    if found is None or found[1] >= len(words) or words[found[1]] != 'of':
        return []
    rest = words[found[1] + 1:]
    while rest and rest[0] in DETERMINERS:
        rest = rest[1:]
    return [c for c in candidates if c != name and (f := find_name(rest, name_words(c))) is not None
            and f[0] <= 1]


def _same_things() -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    """Each name of ``fact_words.txt``'s "same things" and of WordNet's groups of nouns
    (singular words) -> the group's others."""
    named = [[tuple(singular(w) for w in n.split()) for n in line.split('|')]
             for line in word_list('fact_words.txt', 'same things')]
    # A one-word WordNet name whose singular is another word ("glasses", "stairs") would
    # stand for that word's things too (a drinking glass): such names are left out.
    named += [[tuple(singular(w) for w in n.split()) for n in group if ' ' in n or singular(n) == n]
              for group in synonym_groups('n')]
    out: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for group in named:
        for name in group:
            out.setdefault(name, []).extend(o for o in group if o != name and o not in out[name])
    return out


# Names of one thing ("fridge | refrigerator").
_SAME = _same_things()


def aliases(name: str) -> list[str]:
    """``name`` with its head noun (or the words that end it) told by another name of the
    same thing ("the dog lead" -> "dog leash"; "kitchen faucet" -> "kitchen tap").

    >>> aliases('the coffee maker'), aliases('fridge'), aliases('the clothes hamper')
    (['coffee machine'], ['refrigerator', 'electric refrigerator'], ['clothe basket', 'laundry basket'])
    """
    words = [singular(w) for w in name_words(name)]
    found: list[str] = []
    for size in (2, 1):
        tail = tuple(words[-size:]) if len(words) >= size else ()
        for other in _SAME.get(tail, []):
            found.append(' '.join([*words[:-size], *other]))
        if found:
            break  # "clothes hamper" is a laundry basket; its "hamper" alone is not
    # A modifier told otherwise: the "red bike helmet" is the red bicycle helmet.
    for i, word in enumerate(words[:-1]):
        found += [' '.join([*words[:i], *other, *words[i + 1:]]) for other in _SAME.get((word,), [])]
    return list(dict.fromkeys(found))


# Pure, and asked for the same few hundred names again and again: each Retrieve keys the
# twenty-odd names of its query and the facts they find (about 60 calls a Retrieve).
@lru_cache(maxsize=8192)
def entity_key(name: str) -> str:
    """The key facts are filed under: case, articles, plural and modifier order removed.

    The head noun (last word) is kept last and singular; the words before it are
    sorted, so "the Blue Umbrellas" and "umbrella, blue" are the same thing. A name that
    ends in a qualifier after its noun, as software writes them, is read qualifier first.

    >>> entity_key('The Blue Umbrellas'), entity_key('big red cup') == entity_key('red big cup')
    ('blue umbrella', True)
    >>> entity_key('thermostat hall'), entity_key('bottle_blue'), entity_key('kitchen hallway')
    ('hall thermostat', 'blue bottle', 'kitchen hallway')
    >>> entity_key('stove burner front left') == entity_key('front left stove burner')
    True
    """
    words = qualifiers_first(name_words(name))
    if not words:
        return ''
    return ' '.join([*sorted(words[:-1]), singular(words[-1])])


def qualifiers_first(words: Sequence[str]) -> list[str]:
    """``words`` of a name with the qualifiers software writes after the noun put before it:
    "thermostat hall" is the hall thermostat, "burner front left" the front left burner.

    >>> qualifiers_first(['window', 'kitchen']), qualifiers_first(['Door', 'Front'])
    (['kitchen', 'window'], ['Front', 'Door'])
    """
    lowered = [w.lower() for w in words]
    tail = next((n for n in range(len(words)) if lowered[len(words) - 1 - n] not in TRAILING), len(words))
    if 0 < tail < len(words) and lowered[0] not in TRAILING:
        return [*words[-tail:], *words[:-tail]]
    return list(words)


def names_match(query: str, key: str) -> bool:
    """Whether a name as typed (``query``) refers to the entity filed under ``key``.

    Equal keys match; so does a shorter name whose words are all in the key and that
    names the key's head noun ("umbrella" → "blue umbrella", never "umbrella stand").
    """
    q = entity_key(query)
    if not q or not key:
        return False
    if q == key:
        return True
    q_words, k_words = set(q.split()), key.split()
    if sorted(q.split()) == sorted(k_words):
        return True  # "door_front" in a log is the front door
    head = k_words[-1]
    singular_q = {singular(w) for w in q_words}
    return head in singular_q and singular_q <= {singular(w) for w in k_words}


def referents(query: str, keys: Sequence[str], *, fallback: bool = True) -> list[str]:
    """The keys among ``keys`` that a name as typed refers to.

    Those :func:`names_match` accepts, and the less specific names of the same thing: a
    key whose words are all in the query and that has its head noun ("remote" for "the TV
    remote", "laptop" for "Priya's laptop", "bottle blue" from a log's ``bottle_blue`` for
    "the blue water bottle"), as people shorten a name once the thing is known ("I put
    the remote on the shelf"). Only while no other key holds all of its words and names
    something else ("silver phone" beside "black phone"): then "phone" may be either. A
    key with a word of its own ("bottle steel") is another thing, not a fuller name, unless
    it is a shorter name of a key found, which names nothing else:

    >>> referents('phone charger', ['white phone charger', 'white charger'])
    ['white charger', 'white phone charger']
    >>> referents('phone charger', ['white phone charger', 'white charger', 'white laptop charger'])
    ['white phone charger']
    >>> referents('the robot vacuum', ['vacuum 01', 'hallway dock']), referents('lamp 2', ['lamp 1'])
    (['vacuum 01'], [])
    >>> referents('the stapler', ['stapler 01', 'printer table'])
    ['stapler 01']
    """
    q = entity_key(query)
    if not q:
        return []
    words = {singular(w) for w in q.split()}
    head = q.split()[-1]
    # A device's number or label is no word of its name ("vacuum_01" is the robot vacuum,
    # "drill_DR3" the drill) unless the question gives one ("lamp 2" is not "lamp 1").
    numbered = any(labelled(w) for w in words)
    key_words = {k: {singular(w) for w in k.split() if numbered or not labelled(w)} for k in keys if k}
    matched = {k for k in key_words if names_match(query, k)}
    # (Equal words count too: "stapler 01" is the stapler, its number dropped above.)
    general = [k for k, kw in key_words.items() if k not in matched and head in kw and kw <= words]
    others = [ow for o, ow in key_words.items() if o not in matched and o not in general]
    found = matched | {k for k in general if not any(key_words[k] < ow for ow in others)}
    # A shorter name of a thing found ("white charger" once "white phone charger" was named),
    # while it names nothing else ("the white charger" beside a "white laptop charger").
    found |= {k for k, kw in key_words.items() if k not in found and k.split()[-1] == head
              and any(kw < key_words[m] for m in found)
              and not any(kw < ow for o, ow in key_words.items() if o not in found)}
    return sorted(found) if found or not fallback else closest(words, head, key_words)


def labelled(word: str) -> bool:
    """A number or a label: digits in it ("dr3"), or one letter ("shelf b")."""
    return len(word) == 1 or any(c.isdigit() for c in word)


def container_keys(name: str) -> list[str]:
    """The keys of the containers named by exactly ``name`` ("basil pot", "basil jar", ...).

    >>> container_keys('the basil')[:2]
    ['basil bag', 'basil basket']
    """
    key = entity_key(name)
    return sorted(entity_key(f'{key} {c}') for c in CONTAINERS) if key else []


def holding(head: str, keys: Sequence[str]) -> list[str]:
    """The one key of a container named by ``head``, what it holds ("basil pot" for "basil",
    "grocery bag" for "groceries"), or none. For a name no key matches otherwise.

    >>> holding('basil', ['basil pot', 'kitchen windowsill']), holding('water', ['water bottle', 'water jug'])
    (['basil pot'], ['water bottle'])
    """
    found = [k for k in keys if len(k.split()) > 1 and k.split()[-1] in CONTAINERS
             and head in {singular(w) for w in k.split()[:-1]}]
    return found if len(found) == 1 else []


def closest(words: set[str], head: str, key_words: dict[str, set[str]]) -> list[str]:
    """The one key of the same head noun a name describes otherwise ("the tulip vase" for the
    only vase known, "glass vase"; "red bike helmet" for "red bicycle helmet" beside a black
    one): the key sharing the most of its other words, when one does and no colour, material,
    room or side of the name contradicts it. For a name no key matches by its words.

    >>> closest({'tulip', 'vase'}, 'vase', {'glass vase': {'glass', 'vase'}})
    ['glass vase']
    >>> closest({'red', 'cup'}, 'cup', {'blue cup': {'blue', 'cup'}})
    []
    >>> closest({'back', 'door'}, 'door', {'patio door': {'patio', 'door'}})  # another door
    []
    """
    same = {k: kw - {head} for k, kw in key_words.items() if k.split()[-1] == head}
    qualifiers = (words - {head}) & TRAILING
    # "red cup" is not the blue cup: qualifiers of both, none shared.
    fitting = {k: len(kw & words) for k, kw in same.items()
               if not (qualifiers and kw & TRAILING and not kw & qualifiers)}
    if not fitting:
        return []
    best = max(fitting.values())
    top = [k for k, n in fitting.items() if n == best]
    return top if len(top) == 1 and (best > 0 or len(same) == 1) else []
