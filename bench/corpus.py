"""A deterministic corpus of robot observations for benchmarks at 10k, 100k and 1M units.

A household robot's months of work: episodes (tasks) in rooms, each a run of
observations "<action> the <object> <preposition> the <furniture> in the <room>
<outcome>. <detail>." with a pose near the furniture and a time stamp. Embedding a
million texts with the real encoder would take hours, so the *vocabulary* is
embedded once (a few thousand sentences and a few hundred details, cached on
disk) and each unit's vector is composed from it: ``normalise(v_sentence +
0.35 v_detail + noise)``. Neighbourhoods therefore look like real embeddings
(same sentence ≈ near-duplicates, same object or room ≈ similar), and queries are
real encoder outputs of real questions.

Everything is a pure function of the unit's index and the seed: unit ``i`` is the
same in a 10k and a 1M corpus (the 10k corpus is a prefix of the 1M one).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from brainmem_ros.encoders.base import Embedder
from brainmem_ros.encoders.rules import RuleExtractor
from brainmem_ros.memory.types import Entity, Outcome, Pose, StateChange

# room -> (centre x, centre y, furniture)
ROOMS: dict[str, tuple[float, float, tuple[str, ...]]] = {
    'kitchen': (2.0, 3.0, ('counter', 'fridge', 'sink', 'stove', 'kitchen table', 'cupboard')),
    'living room': (8.0, 3.0, ('sofa', 'coffee table', 'tv stand', 'bookshelf', 'armchair')),
    'bedroom': (8.0, 10.0, ('bed', 'nightstand', 'wardrobe', 'dresser')),
    'bathroom': (3.0, 10.0, ('bathroom sink', 'bathtub', 'towel rack', 'medicine cabinet')),
    'hallway': (5.5, 6.5, ('shoe rack', 'coat hook', 'side table', 'front door')),
    'garage': (-4.0, 3.0, ('workbench', 'tool shelf', 'charging dock', 'storage bin')),
    'office': (12.0, 6.0, ('desk', 'office chair', 'filing cabinet', 'printer')),
    'laundry room': (-1.0, 9.0, ('washing machine', 'dryer', 'laundry basket', 'ironing board')),
    'dining room': (12.0, 1.0, ('dining table', 'sideboard', 'high chair')),
    'pantry': (0.0, 0.5, ('pantry shelf', 'freezer', 'snack drawer')),
}
OBJECTS = (
    'red mug', 'blue cup', 'keys', 'wallet', 'remote control', 'phone charger', 'medicine box',
    'milk carton', 'apple', 'laptop', 'notebook', 'towel', 'reading glasses', 'umbrella', 'toolbox',
    'screwdriver', 'dog bowl', 'water bottle', 'potted plant', 'trash bag', 'cereal box', 'banana',
    'plate', 'fork', 'cutting board', 'kettle', 'tv remote', 'slippers', 'backpack', 'hairbrush',
    'toothbrush', 'soap bottle', 'charging cable', 'flashlight', 'tape measure', 'hammer',
    'newspaper', 'coffee beans', 'tea box', 'spoon', 'wine glass', 'pill organizer', 'baby bottle',
    'teddy bear', 'cat toy', 'vacuum cleaner', 'mop', 'sponge', 'detergent', 'light bulb',
)
# (template, outcome, state change (object attribute, value) or None)
ACTIONS: tuple[tuple[str, Outcome, tuple[str, str] | None], ...] = (
    ('Picked up the {o} from the {f}', Outcome.SUCCESS, None),
    ('Placed the {o} on the {f}', Outcome.SUCCESS, ('location', '{f}')),
    ('Saw the {o} on the {f}', Outcome.UNKNOWN, ('location', '{f}')),
    ('Searched for the {o} near the {f} but did not find it', Outcome.FAILURE, None),
    ('Moved the {o} to the {f}', Outcome.SUCCESS, ('location', '{f}')),
    ('Tried to grasp the {o} on the {f} and the gripper slipped', Outcome.FAILURE, None),
    ('Handed the {o} to the person standing by the {f}', Outcome.SUCCESS, None),
    ('Noticed the {o} had fallen behind the {f}', Outcome.UNKNOWN, ('location', 'behind the {f}')),
    ('Put the {o} away in the {f}', Outcome.SUCCESS, ('location', '{f}')),
    ('Dropped the {o} next to the {f}', Outcome.FAILURE, ('location', 'floor')),
    ('Cleaned the {o} at the {f}', Outcome.SUCCESS, ('state', 'clean')),
    ('Could not reach the {o} on top of the {f}', Outcome.FAILURE, None),
)
FURNITURE_ACTIONS: tuple[tuple[str, Outcome], ...] = (
    ('Opened the {f}', Outcome.SUCCESS), ('Closed the {f}', Outcome.SUCCESS),
    ('Wiped the {f}', Outcome.SUCCESS), ('Found the {f} blocked by a chair', Outcome.FAILURE),
    ('Checked the {f}: nothing out of place', Outcome.UNKNOWN),
)
DETAILS = (
    'The battery was at {n} percent.', 'A person was walking by.', 'The lights were off.',
    'It was raining outside.', 'Music was playing in the background.', 'The floor was wet.',
    'The dog was asleep nearby.', 'The door was left open.', 'Someone asked me to hurry.',
    'The camera image was blurry.', 'It took {n} seconds.', 'The path was clear.',
    'A child was playing on the floor.', 'The window was open and it was cold.',
    'The user said thank you.', 'I had to replan the route twice.', 'The TV was on.',
    'There was a strong smell of coffee.', 'The arm motor felt warm.', 'It was very quiet.',
)
TASKS = (
    'tidy the {r}', 'fetch the {o}', 'bring the {o} to the user', 'clean the {r}',
    'find the {o}', 'prepare breakfast', 'patrol the house', 'put away the groceries',
    'do the laundry', 'water the plants', 'charge at the dock', 'set the dining table',
)
QUERY_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ('where did I last see the {o}?', 'find the {o}', 'I am in the {r}'),
    ('what went wrong when I tried to grasp the {o}?', 'pick up the {o}', ''),
    ('where is the {o} usually kept?', 'bring the {o} to the user', 'standing in the hallway'),
    ('what happened in the {r} this morning?', 'tidy the {r}', ''),
    ('which things did I move to the {f}?', 'clean the {f}', 'I am next to the {f}'),
    ('is the {f} blocked?', 'navigate to the {f}', ''),
    ('who did I hand the {o} to?', '', ''),
    ('{o}', 'fetch the {o}', ''),
)

VOCAB_SIZE = 4000
DETAIL_NUMBERS = (5, 12, 20, 35, 50, 64, 80, 95)
DETAIL_WEIGHT = 0.35
NOISE = 0.04
START = 1_704_067_200.0  # 2024-01-01 00:00 UTC


@dataclass(frozen=True)
class Sentence:
    """One vocabulary sentence and what the fast-path extractor finds in it."""

    text: str
    room: str
    furniture: str
    obj: str
    outcome: Outcome
    entities: tuple[Entity, ...]
    actions: tuple[str, ...]
    change: StateChange | None


@dataclass(frozen=True)
class CorpusUnit:
    """One generated observation (everything BrainMem.store would record)."""

    index: int
    text: str
    sentence: int
    stamp: float
    episode_id: str
    pose: Pose
    entities: tuple[Entity, ...]
    actions: tuple[str, ...]
    outcome: Outcome
    state_changes: tuple[StateChange, ...]
    importance: float
    valence: float


@dataclass(frozen=True)
class BenchQuery:
    """A planner's question."""

    query: str
    goal: str
    state: str


def vocabulary(seed: int = 7) -> list[Sentence]:
    """The sentence vocabulary (deterministic)."""
    rng = np.random.default_rng(seed)
    extractor = RuleExtractor()
    rooms = sorted(ROOMS)
    seen: set[str] = set()
    out: list[Sentence] = []
    while len(out) < VOCAB_SIZE:
        room = rooms[int(rng.integers(len(rooms)))]
        furniture = ROOMS[room][2][int(rng.integers(len(ROOMS[room][2])))]
        obj = OBJECTS[int(rng.integers(len(OBJECTS)))]
        if rng.random() < 0.15:
            template, outcome = FURNITURE_ACTIONS[int(rng.integers(len(FURNITURE_ACTIONS)))]
            change_spec: tuple[str, str] | None = None
            obj = ''
        else:
            template, outcome, change_spec = ACTIONS[int(rng.integers(len(ACTIONS)))]
        text = template.format(o=obj, f=furniture) + f' in the {room}.'
        if text in seen:
            continue
        seen.add(text)
        extraction = extractor.extract(text)
        change = None
        if change_spec is not None:
            change = StateChange(obj, change_spec[0], '', change_spec[1].format(f=furniture))
        out.append(Sentence(text, room, furniture, obj, outcome, extraction.entities,
                            extraction.actions, change))
    return out


def details() -> list[str]:
    """Detail phrases appended to sentences."""
    out: list[str] = []
    for d in DETAILS:
        out.extend(d.format(n=n) for n in DETAIL_NUMBERS) if '{n}' in d else out.append(d)
    return out


def _cache_dir() -> Path:
    from brainmem_ros.encoders.models import default_model_dir

    return default_model_dir().parent / 'bench'


def embed_vocabulary(embedder: Embedder, sentences: list[Sentence], detail_texts: list[str]
                     ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Real encoder vectors of the vocabulary, cached by content hash."""
    texts = [s.text for s in sentences] + detail_texts
    key = hashlib.sha256(json.dumps([embedder.dim, *texts]).encode()).hexdigest()[:16]
    path = _cache_dir() / f'vocab-{key}.npy'
    if path.exists():
        vecs = np.load(path)
    else:
        vecs = embedder.embed(texts)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return (np.ascontiguousarray(vecs[:len(sentences)], dtype=np.float32),
            np.ascontiguousarray(vecs[len(sentences):], dtype=np.float32))


class Corpus:
    """Units ``0..n-1`` of the deterministic robot corpus, with composed vectors."""

    def __init__(self, embedder: Embedder, *, seed: int = 11) -> None:
        self.seed = seed
        self.sentences = vocabulary()
        self.details = details()
        self.sentence_vecs, self.detail_vecs = embed_vocabulary(embedder, self.sentences, self.details)
        self.dim = int(self.sentence_vecs.shape[1])
        by_room: dict[str, list[int]] = {}
        for i, s in enumerate(self.sentences):
            by_room.setdefault(s.room, []).append(i)
        self._by_room = {r: np.asarray(v, dtype=np.int64) for r, v in by_room.items()}
        self._rooms = sorted(by_room)

    def units(self, start: int, stop: int) -> Iterator[tuple[CorpusUnit, npt.NDArray[np.float32]]]:
        """Units ``start..stop-1`` with their vectors, generated episode by episode."""
        for block in range(start // 1000, (stop + 999) // 1000):
            for unit, vec in self._block(block):
                if start <= unit.index < stop:
                    yield unit, vec

    def _block(self, block: int) -> list[tuple[CorpusUnit, npt.NDArray[np.float32]]]:
        # 1000 units per block, each block seeded on its own: unit i never depends on n.
        rng = np.random.default_rng([self.seed, block])
        out: list[tuple[CorpusUnit, npt.NDArray[np.float32]]] = []
        # ~8 hours of robot time per block of 1000 observations: ~3000 units a day.
        t = START + block * 8 * 3600.0
        index = block * 1000
        episode_no = 0
        while len(out) < 1000:
            room = self._rooms[int(rng.integers(len(self._rooms)))]
            task = TASKS[int(rng.integers(len(TASKS)))]
            task = task.format(r=room, o=OBJECTS[int(rng.integers(len(OBJECTS)))])
            episode = f'b{block:05d}-e{episode_no:02d} {task}'
            episode_no += 1
            length = int(rng.integers(10, 60))
            sents = np.where(rng.random(length) < 0.75,
                             rng.choice(self._by_room[room], length),
                             rng.integers(0, len(self.sentences), length))
            dets = rng.integers(0, len(self.details), length)
            noise = rng.standard_normal((length, self.dim)).astype(np.float32) * (NOISE / np.sqrt(self.dim))
            vecs = self.sentence_vecs[sents] + DETAIL_WEIGHT * self.detail_vecs[dets] + noise
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            jitter = rng.normal(0.0, 0.8, (length, 2))
            for j in range(length):
                if len(out) == 1000:
                    break
                t += float(rng.uniform(5.0, 40.0))
                s = self.sentences[int(sents[j])]
                cx, cy, _ = ROOMS[s.room]
                failure = s.outcome is Outcome.FAILURE
                out.append((CorpusUnit(
                    index=index, text=f'{s.text} {self.details[int(dets[j])]}', sentence=int(sents[j]),
                    stamp=t, episode_id=episode,
                    pose=Pose(round(cx + float(jitter[j, 0]), 3), round(cy + float(jitter[j, 1]), 3)),
                    entities=s.entities, actions=s.actions, outcome=s.outcome,
                    state_changes=(s.change,) if s.change is not None else (),
                    importance=min(10.0, {Outcome.FAILURE: 7.0, Outcome.SUCCESS: 6.0}.get(s.outcome, 4.0)
                                   + 0.5 * min(len(s.entities), 4)),
                    valence=-0.5 if failure else (0.3 if s.outcome is Outcome.SUCCESS else 0.0)),
                    vecs[j]))
                index += 1
            t += float(rng.uniform(300.0, 3600.0))
        return out


def queries(n: int, *, seed: int = 3) -> list[BenchQuery]:
    """``n`` distinct planner questions about the corpus's objects, furniture and rooms."""
    rng = np.random.default_rng(seed)
    rooms = sorted(ROOMS)
    out: list[BenchQuery] = []
    seen: set[BenchQuery] = set()
    i = 0
    while len(out) < n:
        q, g, s = QUERY_TEMPLATES[i % len(QUERY_TEMPLATES)]
        i += 1
        room = rooms[int(rng.integers(len(rooms)))]
        values = {'o': OBJECTS[int(rng.integers(len(OBJECTS)))], 'r': room,
                  'f': ROOMS[room][2][int(rng.integers(len(ROOMS[room][2])))]}
        query = BenchQuery(q.format(**values), g.format(**values), s.format(**values))
        if query not in seen:
            seen.add(query)
            out.append(query)
    return out
