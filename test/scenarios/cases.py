"""The scenario suite: situations a robot lives through and what it must recall.

Each case stores a few memories (plus shared distractors), asks a question with a goal,
and names the memories that must come back in the top k. Multi-hop cases are the ones
where the answer is not similar to the question itself but is linked, through the
graph, to memories that are: plain vector top-k must miss them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A household day that every case is stored on top of: realistic noise for recall.
DISTRACTORS: tuple[str, ...] = (
    'The living room window is open and the room is cold.',
    'I vacuumed the hallway carpet.',
    'The TV remote is on the sofa.',
    'The user is watching television in the living room.',
    'I charged my battery at the dock for twenty minutes.',
    'The dishwasher is full of clean dishes.',
    'I emptied the trash bin in the kitchen.',
    'The front door is closed and locked.',
    'The cat is sleeping on the armchair.',
    'I folded the towels in the bathroom.',
    'The plant on the windowsill needs water.',
    'I wiped the dining table with a cloth.',
)


@dataclass(frozen=True)
class Memory:
    """One stored memory: text, seconds after the case start, episode."""

    key: str
    text: str
    at: float = 0.0
    episode: str = 'day-1'
    type: str = 'observation'


@dataclass(frozen=True)
class Case:
    """Store ``memories``, ask ``query``/``goal``; ``expect`` keys must be in the top ``k``."""

    name: str
    memories: tuple[Memory, ...]
    query: str
    expect: tuple[str, ...]
    goal: str = ''
    state: str = ''
    k: int = 3
    multi_hop: bool = False
    above: tuple[tuple[str, str], ...] = field(default=())  # (a, b): a must rank above b
    as_of: float | None = None
    absent: tuple[str, ...] = ()


M = Memory

CASES: tuple[Case, ...] = (
    # --- recall by meaning ----------------------------------------------------------
    Case('fridge keeps things cold',
         (M('fridge', 'I opened the fridge to get food for the user.'),),
         'keep the medicine cold', ('fridge',), goal='store the medicine safely'),
    Case('where the milk is',
         (M('milk', 'The milk carton is on the top shelf of the fridge.'),),
         'where can I find milk?', ('milk',)),
    Case('paraphrase of an open door',
         (M('door', 'I opened the refrigerator door.'),),
         'The fridge door is open', ('door',)),
    Case('spill cleaned with a towel',
         (M('spill', 'I spilled orange juice on the kitchen floor and mopped it up with a towel.'),),
         'something wet is on the floor', ('spill',), goal='clean up a mess'),
    Case('charging dock location',
         (M('dock', 'My charging dock is next to the kitchen door.'),),
         'where do I recharge?', ('dock',)),
    Case('user likes tea',
         (M('tea', 'The user asked for green tea with no sugar every morning.'),),
         'make the user a drink', ('tea',), goal='prepare breakfast'),
    Case('keys in the bowl',
         (M('keys', 'The user keeps the car keys in the blue bowl by the entrance.'),),
         'the user cannot find the car keys', ('keys',)),
    Case('glass is fragile',
         (M('glass', 'The wine glass broke when I gripped it too hard.'),),
         'pick up a delicate glass', ('glass',), goal='carry glasses safely'),
    Case('stairs are dangerous',
         (M('stairs', 'I almost fell down the stairs because the top step has no edge marker.'),),
         'navigate near the staircase', ('stairs',)),
    Case('laundry machine',
         (M('washer', 'The washing machine is in the basement next to the dryer.'),),
         'where do I wash clothes?', ('washer',)),
    # --- names, numbers and rare words (lexical and entity recall) -----------------
    Case('room number', (M('r', 'Parcel for room 214 was left at the reception desk.'),),
         'room 214', ('r',)),
    Case('named person', (M('p', 'Ms. Okonkwo asked me to water her orchids on Tuesdays.'),),
         'what did Okonkwo ask for?', ('p',)),
    Case('rare object', (M('m', 'The metronome is on the piano in the music room.'),),
         'metronome', ('m',)),
    Case('product code', (M('c', 'Replacement filter XK-42 goes into the air purifier.'),),
         'XK-42', ('c',)),
    Case('pill schedule', (M('s', 'The user takes two aspirin at 8 pm with water.'),),
         'aspirin', ('s',)),
    # --- multi-hop through the graph -------------------------------------------------
    Case('chair to reach high things',
         (M('book', 'The book on the high shelf was out of my reach.', 0, 'shelf'),
          M('chair', 'I pushed the chair over and climbed onto it.', 20, 'shelf'),
          M('done', 'I handed the book to the user.', 40, 'shelf'),
          M('lamp', 'The keys hang from the tall floor lamp, out of my reach.', 900, 'keys')),
         # Not multi_hop any more: with the dynamic-int8 encoder plain vector top-3 also
         # reaches the chair (at rank 3), so the case no longer separates the two.
         'get the keys hanging from the lamp', ('chair',), k=3,
         goal='give the keys to the user'),
    Case('watering can for the fern',
         (M('plant', 'The fern in the study droops when its soil is dry.', 0, 'plants'),
          M('can', 'The watering can is under the bathroom sink.', 30, 'plants'),
          M('tv', 'The user watched a film in the living room.', 900, 'today')),
         'the fern is drooping', ('can',), goal='help the fern', k=2, multi_hop=True),
    Case('key of the locked closet',
         (M('charger', 'The vacuum charger is kept in the storage closet.', 0, 'chores'),
          M('key', 'The storage closet is locked; its key is in the top kitchen drawer.', 30, 'chores'),
          M('dust', 'Dust is collecting under the sofa.', 900, 'today')),
         'the vacuum battery is empty', ('key',), goal='charge the vacuum', k=3, multi_hop=True),
    Case('guest allergy through the episode',
         (M('nuts', 'Ms. Rossi is allergic to peanuts.', 0, 'visit'),
          M('tin', 'The cookies in the blue tin are made with peanuts.', 30, 'visit'),
          M('fruit', 'There are apples in the fruit bowl.', 60, 'visit')),
         'Ms. Rossi is visiting', ('tin',), goal='offer the guest a snack', k=3, multi_hop=True),
    Case('garage door opener',
         (M('door', 'The garage door opener is on the shelf by the back door.', 0, 'garage'),
          M('car', 'The user drove the car into the garage.', 20, 'garage'),
          M('rain', 'It is raining outside.', 900, 'today')),
         'the user wants to drive the car out', ('door',), goal='let the user leave', k=2,
         multi_hop=True),
    Case('dull knife cause',
         (M('dull', 'The knife was too dull to cut the bread.', 0, 'bread', 'outcome'),
          M('sharpen', 'I sharpened the knife on the whetstone in the drawer.', 30, 'bread', 'action'),
          M('tomato', 'The tomato was squashed instead of sliced.', 900, 'salad', 'outcome')),
         'why was the tomato squashed?', ('tomato',), k=3),
    Case('failure then success ranking',
         (M('fail', 'The knife was too dull to cut the bread.', 0, 'b1', 'outcome'),
          M('new', 'I replaced the dull knife with a new sharp bread knife.', 600, 'b2', 'action'),
          M('ok', 'I cut the bread successfully with the new knife.', 620, 'b2', 'outcome')),
         'cut the bread', ('fail', 'ok'), k=4, above=(('ok', 'fail'),)),
    Case('umbrella by association',
         (M('rain', 'It was raining when the user left, and the user got wet.', 0, 'walk'),
          M('umbrella', 'The user forgot the umbrella in the hallway closet.', 10, 'walk'),
          M('cloud', 'Dark clouds are gathering outside the window.', 900, 'today')),
         'the user is going out and the sky is dark', ('umbrella',), k=4, multi_hop=False),
    # --- time: what was valid then ---------------------------------------------------
    Case('where was the red cup at 10:00',
         (M('table', 'The red cup is on the kitchen table.', 0),
          M('sink', 'I moved the red cup to the sink.', 7200)),
         'where is the red cup?', ('table',), k=1, as_of=3600, absent=('sink',)),
    Case('where is the red cup now',
         (M('table', 'The red cup is on the kitchen table.', 0),
          M('sink', 'I moved the red cup to the sink.', 7200)),
         'where is the red cup?', ('sink',), k=1),
    Case('thermostat setting back then',
         (M('t18', 'The thermostat is set to 18 degrees.', 0),
          M('t22', 'The thermostat is set to 22 degrees.', 5000)),
         'thermostat setting', ('t18',), k=1, as_of=1000, absent=('t22',)),
    # --- context and goals -----------------------------------------------------------
    Case('goal picks the right memory',
         (M('garden', 'The watering can is in the garden shed.'),
          M('paint', 'The paint brushes are in the garage.')),
         'where is the tool I need?', ('garden',), goal='water the plants', k=2),
    Case('state colours the query',
         (M('coat', 'The user wears the red coat when it is cold outside.'),
          M('hat', 'The user wears a sun hat when it is sunny.')),
         'what should the user wear?', ('coat',), state='it is freezing outside', k=1),
    Case('episode memories',
         (M('a', 'I set the table with four plates for dinner.', 0, 'dinner'),
          M('b', 'The user said the soup was too salty.', 60, 'dinner')),
         'how did dinner go?', ('b',), k=3),
    Case('safety lesson',
         (M('hot', 'I touched the stove while it was hot and my gripper sensor overheated.',
            0, 'cook', 'outcome'),),
         'clean the stove', ('hot',), goal='clean the kitchen'),
    Case('door that sticks',
         (M('stick', 'The bathroom door sticks; push it hard with the shoulder to open it.'),),
         'open the bathroom door', ('stick',)),
    Case('where the vacuum lives',
         (M('vac', 'The vacuum cleaner is stored under the stairs.'),),
         'hoover the living room', ('vac',), goal='clean the floor'),
    Case('user allergy',
         (M('nuts', 'The user is allergic to peanuts.'),),
         'make a snack for the user', ('nuts',), goal='prepare food', k=5),
    Case('dog needs walking',
         (M('dog', 'The dog gets walked at 7 am and 6 pm around the block.'),),
         'when does the dog go out?', ('dog',)),
)
