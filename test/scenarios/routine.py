"""Routine household observations over weeks: the background a case is recalled against.

A fixed seed gives the same texts every run. They are what a home robot logs all day
(fetching, tidying, checking rooms, charging), with the same rooms, furniture and
everyday objects the cases talk about, so they compete with the cases' memories the
way a month of real operation would.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

ROOMS = {
    'kitchen': ('counter', 'fridge', 'sink', 'stove', 'kitchen table', 'cupboard', 'kitchen drawer'),
    'living room': ('sofa', 'coffee table', 'tv stand', 'bookshelf', 'armchair', 'window'),
    'bedroom': ('bed', 'nightstand', 'wardrobe', 'dresser'),
    'bathroom': ('bathroom sink', 'bathtub', 'towel rack', 'medicine cabinet'),
    'hallway': ('shoe rack', 'coat hook', 'side table', 'front door', 'closet'),
    'garage': ('workbench', 'tool shelf', 'charging dock', 'storage bin'),
    'office': ('desk', 'office chair', 'filing cabinet', 'printer'),
    'laundry room': ('washing machine', 'dryer', 'laundry basket', 'ironing board'),
    'dining room': ('dining table', 'sideboard', 'high chair'),
}
OBJECTS = (
    'mug', 'cup', 'plate', 'bowl', 'spoon', 'fork', 'towel', 'book', 'remote control', 'phone',
    'charger cable', 'water bottle', 'newspaper', 'laundry', 'shoes', 'jacket', 'backpack',
    'toy car', 'pillow', 'blanket', 'glasses', 'tablet', 'notebook', 'pen', 'cushion', 'basket',
    'trash bag', 'box of tissues', 'candle', 'vase', 'dish rack', 'sponge', 'broom', 'dustpan',
)
ACTIONS = (
    'Picked up the {o} from the {f} in the {r}.',
    'Put the {o} on the {f} in the {r}.',
    'Saw the {o} on the {f}.',
    'Moved the {o} to the {f}.',
    'Carried the {o} from the {r} to the {f}.',
    'Wiped the {f} in the {r}.',
    'Checked the {r}: nothing out of place.',
    'Opened the {f} and closed it again.',
    'Drove to the {f} in the {r}.',
    'Tidied the {o} away into the {f}.',
    'The {o} is on the {f}.',
    'Vacuumed the floor of the {r}.',
    'The user walked into the {r}.',
    'The user asked me to bring the {o}.',
    'Brought the {o} to the user in the {r}.',
    'Passed the {f} on the way to the {r}.',
    'Scanned the {r} for obstacles.',
    'Waited by the {f} for the user.',
)
EXTRAS = (
    'Docked at the charging station; battery at {n} percent.',
    'Finished the patrol of the house.',
    'The lights in the {r} were switched off.',
    'The user is sitting on the sofa.',
    'Replanned the route around a chair in the {r}.',
    'Heard the doorbell ring.',
    'The {r} is quiet.',
)
START = 1_757_000_000.0  # four weeks before the cases' clock (test/scenarios/runner.T0)
SPAN_S = 28 * 86400


@dataclass(frozen=True)
class Routine:
    """One background observation."""

    text: str
    stamp: float
    episode_id: str


def routine(n: int, *, seed: int = 20261201) -> Iterator[Routine]:
    """``n`` routine observations spread evenly over four weeks, in episodes of ~12."""
    rng = random.Random(seed)
    rooms = list(ROOMS)
    episode = 0
    for i in range(n):
        if i % 12 == 0:
            episode += 1
        room = rng.choice(rooms)
        template = rng.choice(EXTRAS) if rng.random() < 0.12 else rng.choice(ACTIONS)
        text = template.format(o=rng.choice(OBJECTS), f=rng.choice(ROOMS[room]), r=room,
                               n=rng.randrange(20, 100))
        yield Routine(text, START + SPAN_S * i / max(1, n), f'routine-{episode}')
