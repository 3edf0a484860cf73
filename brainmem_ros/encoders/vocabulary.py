"""Word lists for the rule-based extractor: robot-world nouns, verbs and cues.

Pure data plus the small functions that derive inflected forms from it. The
lists are deliberately ordinary English; a deployment with its own objects passes
them as ``known_entities`` instead of editing this file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# --- nouns, by entity type -------------------------------------------------------

_NOUNS: Mapping[str, tuple[str, ...]] = {
    'place': (
        'kitchen', 'living room', 'dining room', 'bedroom', 'bathroom', 'hallway', 'hall',
        'corridor', 'garage', 'office', 'study', 'laundry room', 'pantry', 'basement',
        'attic', 'balcony', 'garden', 'yard', 'porch', 'patio', 'terrace', 'entrance',
        'entryway', 'lobby', 'reception', 'lab', 'laboratory', 'storage room', 'storeroom',
        'stairs', 'staircase', 'stairway', 'landing', 'doorway', 'room', 'house', 'home',
        'apartment', 'warehouse', 'aisle', 'elevator', 'playroom', 'nursery', 'workshop',
        'meeting room', 'cafeteria', 'canteen', 'ground floor', 'upstairs', 'downstairs',
        'toilet', 'restroom', 'utility room', 'guest room', 'driveway', 'loading dock',
        'ward', 'waiting room', 'shop', 'store', 'supermarket',
    ),
    'furniture': (
        'table', 'counter', 'countertop', 'shelf', 'bookshelf', 'bookcase', 'cabinet',
        'cupboard', 'drawer', 'desk', 'chair', 'sofa', 'couch', 'armchair', 'bed',
        'nightstand', 'bedside table', 'dresser', 'wardrobe', 'closet', 'stool', 'bench',
        'rack', 'sideboard', 'island', 'sink', 'bathtub', 'tub', 'shower', 'tv stand',
        'coffee table', 'dining table', 'windowsill', 'window', 'door', 'front door',
        'back door', 'wall', 'floor', 'ceiling', 'carpet', 'rug', 'mat', 'doormat',
        'curtain', 'blinds', 'step', 'mirror', 'crib', 'ottoman', 'footstool', 'locker',
        'coat rack', 'shoe rack', 'dish rack', 'drying rack', 'hook', 'tile', 'gate',
        'fence', 'railing', 'banister', 'mantelpiece', 'worktop', 'pantry shelf',
        'reception desk', 'high chair', 'highchair', 'cushion', 'pillow', 'mattress',
    ),
    'appliance': (
        'fridge', 'refrigerator', 'freezer', 'oven', 'microwave', 'stove', 'cooktop', 'hob',
        'dishwasher', 'washing machine', 'washer', 'dryer', 'tumble dryer', 'toaster',
        'kettle', 'coffee machine', 'coffee maker', 'espresso machine', 'blender', 'mixer',
        'tv', 'television', 'lamp', 'light', 'ceiling light', 'fan', 'heater',
        'air conditioner', 'radiator', 'vacuum cleaner', 'vacuum', 'robot vacuum',
        'charger', 'charging dock', 'charging station', 'dock', 'computer', 'laptop',
        'monitor', 'printer', 'phone', 'smartphone', 'tablet', 'remote', 'remote control',
        'tv remote', 'speaker', 'router', 'thermostat', 'doorbell', 'camera', 'rice cooker',
        'iron', 'light switch', 'switch', 'socket', 'outlet', 'power outlet', 'plug',
        'smoke detector', 'alarm', 'extractor hood', 'water tank', 'faucet', 'tap',
        'water heater', 'boiler', 'intercom', 'elevator button',
    ),
    'tool': (
        'knife', 'scissors', 'screwdriver', 'hammer', 'wrench', 'spanner', 'pliers',
        'drill', 'saw', 'spatula', 'ladle', 'whisk', 'tongs', 'peeler', 'grater',
        'can opener', 'bottle opener', 'corkscrew', 'broom', 'mop', 'dustpan', 'sponge',
        'brush', 'scrub brush', 'toilet brush', 'cloth', 'rag', 'duster', 'tape',
        'measuring tape', 'gripper', 'ruler', 'flashlight', 'torch', 'ladder', 'bucket',
        'glove', 'screw', 'nail', 'bolt', 'battery', 'cable', 'cord', 'extension cord',
        'key', 'lighter', 'wheel', 'arm', 'rolling pin', 'cutting board', 'chopping board',
        'squeegee', 'watering can', 'hose', 'shovel', 'rake',
    ),
    'food': (
        'apple', 'banana', 'orange', 'lemon', 'lime', 'grape', 'strawberry', 'pear', 'peach',
        'tomato', 'potato', 'onion', 'carrot', 'lettuce', 'cucumber', 'pepper', 'bread',
        'toast', 'sandwich', 'cheese', 'butter', 'milk', 'egg', 'yogurt', 'yoghurt',
        'cereal', 'rice', 'pasta', 'noodles', 'soup', 'meat', 'chicken', 'fish', 'cookie',
        'biscuit', 'cake', 'chocolate', 'candy', 'sugar', 'salt', 'flour', 'coffee', 'tea',
        'juice', 'orange juice', 'water', 'soda', 'beer', 'wine', 'pizza', 'snack', 'chips',
        'crisps', 'sauce', 'ketchup', 'honey', 'jam', 'oil', 'olive oil', 'vinegar',
        'spice', 'fruit', 'vegetable', 'food', 'leftovers', 'cracker', 'muffin',
        'croissant', 'nut', 'ice', 'ice cream', 'salad', 'dinner', 'lunch', 'breakfast',
        'medicine', 'pill', 'vitamin', 'dessert', 'drink',
    ),
    'object': (
        'cup', 'mug', 'glass', 'plate', 'bowl', 'dish', 'pan', 'frying pan', 'saucepan',
        'pot', 'lid', 'jar', 'bottle', 'can', 'tin', 'box', 'carton', 'container', 'tray',
        'baking tray', 'basket', 'laundry basket', 'bag', 'backpack', 'suitcase',
        'package', 'parcel', 'envelope', 'letter', 'mail', 'book', 'notebook', 'magazine',
        'newspaper', 'paper', 'pen', 'pencil', 'marker', 'toy', 'ball', 'doll',
        'teddy bear', 'puzzle', 'game', 'glasses', 'reading glasses', 'sunglasses',
        'wallet', 'purse', 'watch', 'ring', 'necklace', 'hat', 'cap', 'coat', 'jacket',
        'shirt', 'sock', 'shoe', 'boot', 'sneaker', 'slipper', 'umbrella', 'towel',
        'napkin', 'paper towel', 'tissue', 'blanket', 'sheet', 'duvet', 'laundry',
        'clothes', 'trash', 'garbage', 'rubbish', 'trash can', 'trash bag', 'garbage bag',
        'bin', 'recycling bin', 'plant', 'flower', 'vase', 'candle', 'picture', 'photo',
        'frame', 'painting', 'clock', 'fork', 'spoon', 'teaspoon', 'chopsticks',
        'cutlery', 'utensil', 'pitcher', 'jug', 'thermos', 'water bottle', 'lunchbox',
        'pill bottle', 'soap', 'soap bar', 'shampoo', 'toothbrush', 'toothpaste',
        'detergent', 'dish soap', 'crate', 'pallet', 'item', 'object', 'obstacle', 'coin',
        'receipt', 'card', 'handle', 'knob', 'button', 'spill', 'stain', 'puddle', 'mess',
        'crumbs', 'debris', 'shard', 'wrapper', 'leg', 'lamp shade', 'cushion cover',
        'tablecloth', 'placemat', 'coaster', 'kettle lid', 'jar lid', 'teapot', 'saucer',
        'wine glass', 'dishes', 'groceries', 'shopping bag', 'key ring', 'keychain',
        'headphones', 'glove box', 'toolbox', 'first aid kit', 'bandage', 'wheelchair',
        'walker', 'cane', 'stroller', 'bicycle', 'car', 'toy car', 'toy box', 'block',
    ),
    'person': (
        'person', 'man', 'woman', 'child', 'kid', 'baby', 'boy', 'girl', 'user', 'owner',
        'resident', 'visitor', 'guest', 'human', 'operator', 'people', 'family', 'mom',
        'mum', 'dad', 'mother', 'father', 'grandma', 'grandmother', 'grandpa',
        'grandfather', 'nurse', 'doctor', 'caregiver', 'courier', 'delivery person',
        'staff', 'worker', 'colleague', 'patient', 'neighbour', 'neighbor', 'friend',
        'cleaner', 'technician', 'teacher', 'student',
    ),
    'animal': ('cat', 'dog', 'puppy', 'kitten', 'pet', 'bird', 'parrot', 'hamster', 'fish tank'),
}

#: normalised noun (single or multi-word) -> entity type
NOUN_TYPES: dict[str, str] = {
    noun: kind for kind, nouns in _NOUNS.items() for noun in nouns
}

#: Common first names; other names are found by capitalisation (see rules.py).
PERSON_NAMES: frozenset[str] = frozenset({
    'anna', 'ben', 'mia', 'leo', 'sara', 'sarah', 'tom', 'emma', 'liam', 'olivia', 'noah',
    'ava', 'lucas', 'sophia', 'sofia', 'ella', 'max', 'alex', 'sam', 'john', 'mary', 'paul',
    'peter', 'maria', 'david', 'laura', 'lisa', 'mark', 'james', 'julia', 'kate', 'jack',
    'lena', 'jonas', 'ali', 'yuki', 'chen', 'wei', 'omar', 'nina', 'eva', 'marco', 'ana',
})

#: Words kept in an entity's name when they precede its noun ("red cup", "top shelf").
MODIFIERS: frozenset[str] = frozenset({
    # colours
    'red', 'blue', 'green', 'yellow', 'black', 'white', 'grey', 'gray', 'orange', 'purple',
    'pink', 'brown', 'silver', 'gold', 'golden', 'beige', 'transparent', 'clear',
    # materials
    'wooden', 'metal', 'metallic', 'plastic', 'glass', 'ceramic', 'paper', 'cardboard',
    'steel', 'leather', 'cotton', 'rubber', 'porcelain', 'wicker',
    # size and shape
    'small', 'large', 'big', 'little', 'tiny', 'huge', 'tall', 'short', 'long', 'round',
    'square',
    # position and order
    'top', 'bottom', 'upper', 'lower', 'left', 'right', 'middle', 'centre', 'center',
    'front', 'back', 'rear', 'high', 'low', 'first', 'second', 'third', 'fourth', 'last',
    'near', 'far', 'inner', 'outer', 'north', 'south', 'east', 'west', 'main', 'spare',
})

#: Nouns that may stand before another noun to form a compound ("coffee mug").
COMPOUND_MODIFIERS: frozenset[str] = frozenset({
    # No -ing words here ("washing dishes" is an action); the real -ing compounds
    # ("washing machine", "cutting board") are multi-word nouns above.
    'coffee', 'tea', 'water', 'dish', 'paper', 'trash', 'garbage', 'recycling', 'laundry',
    'kitchen', 'bathroom', 'bedroom', 'office', 'garden', 'tool', 'shoe', 'coat', 'wine',
    'soup', 'cereal', 'fruit', 'salad', 'bread', 'butter', 'dinner', 'milk', 'juice',
    'pickle', 'soap', 'pill', 'toy', 'bedside', 'pantry', 'storage', 'couch', 'sofa', 'desk',
    'ceiling', 'wall', 'floor', 'door', 'window', 'ground', 'reception', 'guest', 'utility',
    'sugar', 'spice', 'cookie', 'pet', 'baby', 'tv', 'cat', 'dog', 'kids', 'glass', 'metal',
})

#: Parts named after their owner ("fridge door"): the entity is the owner and the
#: part becomes the state-change attribute.
PARTS: frozenset[str] = frozenset({
    'door', 'handle', 'lid', 'knob', 'cap', 'button', 'screen', 'leg', 'drawer', 'light',
    'cord', 'plug', 'switch', 'shelf', 'tray', 'tank', 'wheel',
})

#: Owner types whose parts attach to them (a kitchen door is a door, not a part).
PART_OWNER_TYPES: frozenset[str] = frozenset({'appliance', 'furniture', 'object', 'tool'})

#: Robot self-references and generic words never reported as entities.
NOT_ENTITIES: frozenset[str] = frozenset({
    'robot', 'i', 'me', 'myself', 'it', 'thing', 'something', 'stuff', 'anything',
    'everything', 'way', 'side', 'path', 'route', 'time', 'attempt', 'task',
})

_IRREGULAR_PLURALS: Mapping[str, str] = {
    'knives': 'knife', 'shelves': 'shelf', 'people': 'people', 'children': 'child',
    'women': 'woman', 'men': 'man', 'leaves': 'leaf', 'loaves': 'loaf', 'feet': 'foot',
    'mice': 'mouse', 'teeth': 'tooth', 'wolves': 'wolf', 'halves': 'half',
    'glasses': 'glasses', 'scissors': 'scissors', 'pliers': 'pliers', 'tongs': 'tongs',
    'clothes': 'clothes', 'stairs': 'stairs', 'blinds': 'blinds', 'chopsticks': 'chopsticks',
    'sunglasses': 'sunglasses', 'headphones': 'headphones', 'leftovers': 'leftovers',
    'noodles': 'noodles', 'chips': 'chips', 'crisps': 'crisps', 'crumbs': 'crumbs',
    'dishes': 'dishes', 'groceries': 'groceries', 'upstairs': 'upstairs',
    'downstairs': 'downstairs', 'cutlery': 'cutlery', 'news': 'news', 'series': 'series',
}


def singular(word: str) -> str:
    """Singular of an English noun (approximate; known nouns win over rules)."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word in NOUN_TYPES or len(word) < 4 or not word.endswith('s') or word.endswith('ss'):
        return word
    candidates: list[str] = []
    if word.endswith('ies'):
        candidates.append(word[:-3] + 'y')
    if word.endswith('ves'):
        candidates += [word[:-3] + 'f', word[:-3] + 'fe']
    if word.endswith('es'):
        candidates.append(word[:-2])
    candidates.append(word[:-1])
    for candidate in candidates:
        if candidate in NOUN_TYPES or candidate in COMPOUND_MODIFIERS:
            return candidate
    if word.endswith(('ches', 'shes', 'xes', 'zes', 'sses')):
        return word[:-2]
    if word.endswith('ies'):
        return word[:-3] + 'y'
    return word[:-1]


# --- verbs -----------------------------------------------------------------------

#: Robot-relevant verbs in base form (regular inflections derived below).
VERBS: frozenset[str] = frozenset({
    # manipulation
    'pick', 'place', 'put', 'grab', 'grasp', 'grip', 'hold', 'release', 'drop', 'lift',
    'lower', 'carry', 'bring', 'fetch', 'deliver', 'take', 'give', 'hand', 'move', 'push',
    'pull', 'slide', 'rotate', 'turn', 'twist', 'flip', 'tilt', 'shake', 'pour', 'fill',
    'refill', 'empty', 'open', 'close', 'shut', 'lock', 'unlock', 'press', 'switch', 'plug',
    'unplug', 'insert', 'remove', 'stack', 'unstack', 'sort', 'fold', 'unfold', 'hang',
    'store', 'load', 'unload', 'pack', 'unpack', 'replace', 'attach', 'detach', 'tighten',
    'loosen', 'screw', 'unscrew', 'throw', 'toss', 'cover', 'uncover', 'lay', 'arrange',
    'organise', 'organize', 'collect', 'gather', 'discard', 'recycle', 'squeeze', 'wrap',
    'unwrap', 'touch', 'knock', 'align', 'adjust', 'use', 'fit', 'point', 'tap',
    # cleaning and cooking
    'wipe', 'clean', 'wash', 'rinse', 'dry', 'scrub', 'sweep', 'mop', 'vacuum', 'dust',
    'tidy', 'clear', 'cut', 'slice', 'chop', 'peel', 'stir', 'mix', 'cook', 'heat', 'boil',
    'bake', 'fry', 'toast', 'serve', 'set', 'water', 'feed', 'prepare', 'make', 'brew',
    'sharpen', 'repair', 'fix', 'charge', 'recharge',
    # navigation
    'navigate', 'start', 'go', 'walk', 'drive', 'approach', 'enter', 'exit', 'leave', 'return',
    'arrive', 'reach', 'follow', 'avoid', 'stop', 'wait', 'dock', 'undock', 'explore',
    'patrol', 'climb', 'cross', 'park', 'reverse', 'retreat', 'head', 'travel',
    'pass', 'come', 'visit', 'escort', 'guide', 'postpone', 'skip', 'pause', 'resume',
    'abort', 'retry', 'reroute', 'replan', 'plan', 'map',
    # perception
    'search', 'look', 'find', 'locate', 'detect', 'see', 'notice', 'observe', 'spot',
    'recognise', 'recognize', 'identify', 'scan', 'inspect', 'check', 'count', 'measure',
    'localise', 'localize', 'hear', 'listen', 'watch', 'monitor', 'smell', 'sense',
    # interaction
    'greet', 'ask', 'tell', 'say', 'answer', 'call', 'remind', 'help', 'assist', 'speak',
    'announce', 'report', 'warn', 'thank', 'wave', 'nod', 'request', 'confirm', 'show',
    # people and events
    'sit', 'stand', 'sleep', 'wake', 'eat', 'drink', 'read', 'write', 'play', 'lie',
    'ring', 'beep', 'collide', 'bump', 'hit', 'fall', 'spill', 'break', 'slip', 'crash',
    'tip', 'topple', 'roll', 'block', 'crack', 'shatter', 'burn', 'leak', 'overflow',
    'jam', 'miss', 'lose', 'bend', 'tear', 'scratch', 'stain', 'splash', 'sink',
})

_IRREGULAR_FORMS: Mapping[str, tuple[str, ...]] = {
    'take': ('took', 'taken'), 'hold': ('held',), 'bring': ('brought',),
    'go': ('went', 'gone', 'goes'), 'see': ('saw', 'seen'), 'find': ('found',),
    'leave': ('left',), 'fall': ('fell', 'fallen'), 'break': ('broke', 'broken'),
    'give': ('gave', 'given'), 'make': ('made',), 'throw': ('threw', 'thrown'),
    'drive': ('drove', 'driven'), 'hang': ('hung',), 'lay': ('laid',), 'feed': ('fed',),
    'speak': ('spoke', 'spoken'), 'tell': ('told',), 'say': ('said',), 'hear': ('heard',),
    'stand': ('stood',), 'sit': ('sat',), 'wake': ('woke', 'woken'), 'shake': ('shook', 'shaken'),
    'sweep': ('swept',), 'spill': ('spilt',), 'come': ('came',), 'eat': ('ate', 'eaten'),
    'drink': ('drank', 'drunk'), 'read': (), 'write': ('wrote', 'written'), 'lie': ('lying',),
    'lose': ('lost',), 'bend': ('bent',), 'tear': ('tore', 'torn'), 'sink': ('sank', 'sunk'),
    'burn': ('burnt',), 'ring': ('rang', 'rung'), 'hit': (), 'put': (), 'set': (), 'cut': (),
    'shut': (), 'fit': (), 'wear': ('wore', 'worn'), 'slide': ('slid',),
}
#: irregular verbs whose regular past is also in use ("spilled" and "spilt")
_BOTH_PASTS: frozenset[str] = frozenset({'spill', 'burn'})

#: longer verbs whose final consonant doubles (one-syllable ones follow the rule below)
_DOUBLING: frozenset[str] = frozenset({'unplug', 'unwrap', 'patrol', 'control', 'refer', 'begin'})
_VOWELS = frozenset('aeiou')


def _doubles(verb: str) -> bool:
    """One-syllable consonant-vowel-consonant verbs double: drop -> dropped, scan -> scanned."""
    if verb in _DOUBLING:
        return True
    if len(verb) < 3 or verb[-1] in _VOWELS or verb[-1] in 'wxy':
        return False
    syllables = sum(1 for i, c in enumerate(verb) if c in _VOWELS and (i == 0 or verb[i - 1] not in _VOWELS))
    return syllables == 1 and verb[-2] in _VOWELS and verb[-3] not in _VOWELS


def _regular_forms(verb: str) -> tuple[str, ...]:
    if verb.endswith('e') and not verb.endswith(('ee', 'ye', 'oe')):
        stem = verb[:-1]
        return (verb + 's', verb + 'd', stem + 'ing')
    if verb.endswith('y') and len(verb) > 2 and verb[-2] not in 'aeiou':
        return (verb[:-1] + 'ies', verb[:-1] + 'ied', verb + 'ing')
    if _doubles(verb):
        double = verb + verb[-1]
        return (verb + 's', double + 'ed', double + 'ing')
    plural = verb + 'es' if verb.endswith(('s', 'sh', 'ch', 'x', 'z', 'o')) else verb + 's'
    return (plural, verb + 'ed', verb + 'ing')


def verb_forms(verbs: Iterable[str]) -> dict[str, str]:
    """Map every inflected form of ``verbs`` (and the base form) to its lemma."""
    forms: dict[str, str] = {}
    for verb in verbs:
        inflected = _regular_forms(verb)
        if verb in _IRREGULAR_FORMS:
            past = _IRREGULAR_FORMS[verb]
            if verb not in _BOTH_PASTS:
                # Irregular verbs keep their regular -s and -ing forms only.
                inflected = tuple(f for f in inflected if not f.endswith(('ed', 'd')))
            inflected += past
        for form in (verb, *inflected):
            forms.setdefault(form, verb)
    return forms


#: inflected form -> lemma, for the verbs above
VERB_FORMS: dict[str, str] = verb_forms(VERBS)

#: Verbs that are never reported as actions: copula, auxiliaries, modals, attempts.
NON_ACTION_VERBS: frozenset[str] = frozenset({
    'be', 'is', 'am', 'are', 'was', 'were', 'been', 'being', 'have', 'has', 'had', 'do',
    'does', 'did', 'will', 'would', 'can', 'could', 'shall', 'should', 'may', 'might',
    'must', 'try', 'tried', 'tries', 'trying', 'manage', 'managed', 'fail', 'failed',
    'succeed', 'succeeded', 'want', 'wanted', 'need', 'needed', 'seem', 'seemed', 'get',
    'got', 'gotten', 'let', 'keep', 'kept', 'begin', 'began', 'finish', 'finished',
    'complete', 'completed', 'continue', 'continued',
})

#: Adjectives (many are participles) that describe a state, not an action.
STATE_WORDS: frozenset[str] = frozenset({
    'open', 'opened', 'closed', 'shut', 'empty', 'full', 'clean', 'dirty', 'dry', 'wet',
    'broken', 'cracked', 'locked', 'unlocked', 'on', 'off', 'stuck', 'blocked', 'jammed',
    'tidy', 'messy', 'clear', 'charged', 'plugged', 'unplugged', 'hot', 'cold', 'warm',
    'ready', 'missing', 'gone', 'spilled', 'spilt', 'lit', 'running', 'free', 'occupied',
    'available', 'busy', 'low', 'done', 'fallen', 'away', 'out', 'back',
    'asleep', 'awake', 'heavy', 'tight', 'loose', 'dull', 'sharp', 'slippery', 'fragile',
})

#: States that ``<verb> the X`` leaves X in ("opened the fridge" -> fridge: open).
VERB_RESULT_STATES: Mapping[str, str] = {
    'open': 'open', 'close': 'closed', 'shut': 'closed', 'lock': 'locked',
    'unlock': 'unlocked', 'empty': 'empty', 'fill': 'full', 'refill': 'full',
    'clean': 'clean', 'wipe': 'clean', 'wash': 'clean', 'dry': 'dry', 'break': 'broken',
    'charge': 'charged', 'plug': 'plugged in', 'unplug': 'unplugged', 'tidy': 'tidy',
    'load': 'loaded', 'unload': 'unloaded', 'fold': 'folded',
}

#: Verbs that move their object to the place named after to/on/in/into ("moved X to Y").
PLACING_VERBS: frozenset[str] = frozenset({
    'move', 'put', 'place', 'bring', 'carry', 'take', 'set', 'drop', 'hang', 'lay', 'push',
    'pull', 'slide', 'return', 'store', 'deliver', 'fetch', 'stack', 'load', 'throw',
    'toss', 'hand', 'give', 'pour', 'insert', 'transfer',
})

DETERMINERS: frozenset[str] = frozenset({
    'the', 'a', 'an', 'my', 'your', 'his', 'her', 'its', 'our', 'their', 'this', 'that',
    'these', 'those', 'some', 'any', 'each', 'every', 'another', 'no', 'all', 'both',
    'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
    'several', 'many', 'few', 'other', "'s",
})

OBJECT_PRONOUNS: frozenset[str] = frozenset({
    'it', 'them', 'him', 'her', 'me', 'us', 'you', 'everything', 'something', 'myself',
    'itself', 'themselves', 'up', 'down', 'out', 'off', 'on', 'away', 'back', 'over', 'in',
})

SUBJECT_PRONOUNS: frozenset[str] = frozenset({
    'i', 'we', 'you', 'he', 'she', 'they', 'it', 'robot', 'and', 'then', 'to', 'will',
    'would', 'can', 'could', 'should', 'must', 'not', "n't", 'also', 'just', 'finally',
})

COPULAS: frozenset[str] = frozenset({
    'is', 'are', 'was', 'were', 'be', 'been', 'being', "'s", "'re", 'am', 'seems', 'seemed',
    'looks', 'looked', 'remains', 'remained', 'stays', 'stayed', 'got', 'gets', 'became',
    'becomes', 'left',
})

PREPOSITIONS: frozenset[str] = frozenset({
    'in', 'on', 'at', 'to', 'into', 'onto', 'from', 'of', 'with', 'by', 'under', 'over',
    'above', 'below', 'behind', 'beside', 'near', 'next', 'inside', 'outside', 'through',
    'across', 'towards', 'toward', 'for', 'off', 'out', 'between', 'around', 'against',
    'along', 'past', 'without', 'upon', 'within', 'beneath', 'underneath',
})

#: Prepositions that name where an object ends up ("moved X to Y", "X is in Y").
LOCATION_PREPOSITIONS: frozenset[str] = frozenset({
    'to', 'on', 'onto', 'in', 'into', 'at', 'under', 'inside', 'behind', 'beside', 'near',
    'next', 'above', 'below', 'beneath', 'underneath', 'by', 'in front of',
})

# --- outcome cues (regular expressions over lower-cased text) -----------------------

#: (pattern, valence): failure cues
FAILURE_CUES: tuple[tuple[str, float], ...] = (
    (r"\bfail(?:ed|s|ing|ure)?\b", -0.6),
    (r"\bcould ?n[o']t\b", -0.5),
    (r"\bcan ?n[o']t\b", -0.5),
    (r"\bwas ?n't able\b|\bwas not able\b|\bwere not able\b", -0.5),
    (r"\bunable\b", -0.5),
    # Only the transitive or passive "dropped": "the battery dropped below 20%" is no failure.
    (r"\bdropp(?:ed|ing) (?:the|a|an|my|it|them|his|her|its|one|two|some)\b"
     r"|\b(?:was|were|got|been|be) dropped\b|\bdropped[.!]?$", -0.6),
    (r"\bbroke\b|\bbroken\b|\bshatter(?:ed|s)?\b|\bcrack(?:ed|s)\b", -0.8),
    (r"\bslipp(?:ed|ing)\b|\bslips\b", -0.6),
    (r"\bspill(?:ed|t|ing)\b", -0.6),  # the verb; "mopped up the spill" is no failure
    (r"\bstuck\b|\bjammed\b", -0.5),
    (r"\bcollid(?:ed|es|ing)\b|\bcollision\b|\bbump(?:ed|s)? into\b|\bcrash(?:ed|es)?\b", -0.7),
    (r"\bmiss(?:ed|es)\b", -0.4),
    (r"\btoo (?:dull|heavy|high|far|tight|big|small|slippery|narrow|low|full|hot|short|wide)\b", -0.4),
    (r"\btimed out\b|\btime-?out\b|\baborted\b|\bgave up\b|\berror\b", -0.5),
    (r"\bknocked (?:\w+ ){0,3}(?:over|off|down)\b|\bfell\b|\btipped over\b", -0.6),
    (r"\bdid ?n[o']t (?:work|fit|open|close|move|budge)\b|\bwould ?n[o']t (?:fit|open|close|move|budge)\b", -0.5),  # noqa: E501
)

#: (pattern, valence): success cues
SUCCESS_CUES: tuple[tuple[str, float], ...] = (
    (r"\bsucceed(?:ed|s)?\b|\bsuccess(?:ful(?:ly)?)?\b", 0.7),
    (r"\bmanaged to\b", 0.6),
    (r"\bwas able to\b|\bwere able to\b", 0.5),
    (r"\bcompleted?\b|\bfinished\b|\baccomplished\b", 0.5),
    (r"\b(?:is|are|was|all|now|task|job) done\b|\bdone with\b", 0.5),
    (r"\bworked\b", 0.4),
)

#: Words that cancel a cue when they come just before it ("did not fail").
NEGATIONS: frozenset[str] = frozenset({'not', 'never', 'without', 'no', "n't", 'nothing'})
