"""Facts: what an entity's attribute was, from when to when, and which memories say so.

Observations are episodic events and stay true forever ("I loaded the dishwasher" is
true even after it was loaded again). What a newer observation can replace is a *fact*
derived from them: ``(entity, attribute, value, valid_from, valid_until)`` with its
evidence. Each unit contributes :class:`Claim` items (from the extractor's state
changes, from attributes of pre-extracted entities, and from its pose: a sighting);
the claims of one entity and attribute, ordered by time, give its :func:`timeline`.
A claim of the value already held confirms the fact; a different value closes it and
opens the next. Late, out-of-order observations land where their stamp puts them
because the timeline is always the claims in time order, never the arrival order.

Everything here is a pure rule over values; names are matched by
:mod:`brainmem_ros.memory.entity_names` (its names are importable from here too), the
words the rules read are data (``brainmem_ros/data/fact_words.txt``), and the SQL is in
:mod:`brainmem_ros.memory.fact_store`.

>>> from brainmem_ros.memory.types import MemoryUnit, StateChange
>>> unit = MemoryUnit(id=1, stamp=10.0, text='The door is open.',
...                   state_changes=(StateChange('door', 'state', '', 'open'),))
>>> [(c.entity, c.attribute, c.value) for c in claims_of(unit)]
[('door', 'state', 'open')]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from brainmem_ros.memory.entity_names import (
    contents,
    entity_key,
    names_match,
    opened_by,
    owner_of,
    referents,
    shown_by,
    singular,
    speaker,
)
from brainmem_ros.memory.places import fallback_locations, held_by, nested_places
from brainmem_ros.memory.types import MemoryUnit, Pose, StateChange, UnitType, normalise_name

__all__ = [
    'BEFORE_OFFSET_S', 'CONFIDENCE', 'CURRENT_FACTOR', 'DERIVED_TYPES', 'HOLDER', 'LOCATION', 'NAMED_FACTOR',
    'PLACE_ATTRIBUTES', 'POSITION', 'SIGHTING_RADIUS', 'STALE_FACTOR', 'Claim', 'Fact', 'FactLookup',
    'answer_order', 'claims_of', 'entity_key', 'fact_of', 'fallback_locations',
    'format_pose', 'names_match', 'referents', 'runs', 'same_value', 'singular', 'timeline', 'value_key',
]

LOCATION = 'location'
HOLDER = 'holder'
# The last place an object was seen at, from the pose of the observation that saw it.
POSITION = 'position'
# Attributes where an object is; they come first in answers.
PLACE_ATTRIBUTES = (LOCATION, HOLDER, POSITION)

# Sightings closer than this (metres, same frame) are the same place: the object stayed.
SIGHTING_RADIUS = 0.5
# A "moved X from A to B" says X was at A just before; the claim sits this much earlier.
BEFORE_OFFSET_S = 1e-3
# Confidence of a claim by how it was derived.
CONFIDENCE = {'text': 0.8, 'entity': 0.9, 'pose': 0.6, 'before': 0.5, 'fallback': 0.6}

# fact_factors (fact_rank.py): multiplicative score factors per candidate unit.
CURRENT_FACTOR = 1.25   # states the value the entity has at the reference time
STALE_FACTOR = 0.75     # states only values that no longer hold (or not yet) then
NAMED_FACTOR = 1.15     # states a value the query itself names

_SPOKEN_TYPES = (UnitType.OBSERVATION, UnitType.ACTION, UnitType.OUTCOME)
# Units the memory writes about other units: a reflection is stamped when written and quotes
# observations ("Latest: ..."), so its claims would state old values anew, when they may no
# longer hold, and make every later observation a late one.
DERIVED_TYPES = (UnitType.REFLECTION,)


@dataclass(frozen=True)
class Claim:
    """What one unit says about one attribute of one entity, at the unit's time."""

    entity: str          # as written (normalised by normalise_name)
    attribute: str
    value: str
    stamp: float
    unit_id: int
    source: str          # text | entity | pose | before | fallback
    confidence: float
    pose: Pose | None = None

    @property
    def key(self) -> str:
        """The entity's matching key (see :func:`entity_key`)."""
        return entity_key(self.entity)


@dataclass(frozen=True)
class Fact:
    """An entity's attribute had ``value`` from ``valid_from`` until ``valid_until``.

    ``valid_until`` None: still true as far as the memory knows. ``evidence`` are the
    ids of the units that state it, oldest first; ``last_seen`` the stamp of the newest.
    ``pose`` is the newest evidence's pose (for ``position``: the last known pose).
    """

    entity: str
    attribute: str
    value: str
    valid_from: float
    valid_until: float | None
    evidence: tuple[int, ...]
    last_seen: float
    source: str
    confidence: float
    pose: Pose | None = None
    id: int = 0

    @property
    def frame(self) -> str:
        """Frame of :attr:`pose` ('' when no pose is known)."""
        return self.pose.frame if self.pose is not None else ''

    @property
    def current(self) -> bool:
        """True while no later value has replaced it."""
        return self.valid_until is None

    def valid_at(self, t: float) -> bool:
        """Whether the fact held at time ``t``."""
        return self.valid_from <= t and (self.valid_until is None or t < self.valid_until)


class FactLookup(Protocol):
    """Where :func:`~brainmem_ros.memory.fact_rank.fact_factors` reads facts (FactStore implements it)."""

    def facts_about(self, names: Sequence[str], *, skip: Sequence[str] = ()) -> list[Fact]:
        """All facts (current and closed) of the entities that ``names`` match, but ``skip``'s attributes."""
        ...


# -- values ----------------------------------------------------------------------------

def value_key(attribute: str, value: str) -> str:
    """The comparable form of a value: places as entity keys, states lower-cased."""
    if attribute in (LOCATION, HOLDER):
        return entity_key(value)
    return ' '.join(value.lower().split())


def format_pose(pose: Pose) -> str:
    """A position value: coordinates in metres (to the centimetre) and the frame."""
    return f'{pose.x:.2f} {pose.y:.2f} {pose.z:.2f} @ {pose.frame}'


# -- claims of a unit ------------------------------------------------------------------

def claims_of(unit: MemoryUnit) -> list[Claim]:
    """Everything ``unit`` states about entities' attributes (see the module docstring).

    * each state change → ``(object, attribute, after)``; a location/holder change with a
      ``before`` ("from the hallway") also says where it was just before;
    * each ``(attribute, value)`` of a pre-extracted entity;
    * with a pose, a ``position`` sighting of every non-place entity of an observation,
      action or outcome (plans and reflections see nothing), except the places it left;
    * when the extractor gave no place for an entity, :func:`fallback_locations`; where the
      places it named are, :func:`~brainmem_ros.memory.places.nested_places`.

    A derived unit (:data:`DERIVED_TYPES`: a reflection) states nothing: it is evidence
    of no fact, only of the units it was drawn from.
    """
    claims: list[Claim] = []
    if unit.type in DERIVED_TYPES:
        return claims
    stated: set[tuple[str, str]] = set()
    left: set[str] = set()

    def add(entity: str, attribute: str, value: str, source: str, stamp: float) -> None:
        name, attr = normalise_name(entity), attribute.strip().lower()
        val = held_by(value.strip()) if attr in (LOCATION, HOLDER) else value.strip()
        if not name or not attr or not val:
            return
        claims.append(Claim(name, attr, val, stamp, unit.id, source, CONFIDENCE[source], unit.pose))
        stated.add((entity_key(name), attr))

    # "Dana: my phone is in my purse" is about Dana's phone, not Eli's (who has one too);
    # "I filled Emma's bottle" about Emma's.
    owner = speaker(unit.text)
    for change in unit.state_changes:
        thing = _claimed_name(change, unit, owner)
        add(thing, change.attribute, change.after, 'text', unit.stamp)
        placed = change.attribute.strip().lower() in (LOCATION, HOLDER)
        for also in _also_claimed(unit, change, thing, placed=placed):
            add(also, change.attribute, change.after, 'text', unit.stamp)
        if change.before and placed:
            add(thing, change.attribute, change.before, 'before', unit.stamp - BEFORE_OFFSET_S)
            left.add(entity_key(change.before))
    for entity in unit.entities:
        for attribute, value in entity.attributes:
            add(entity.name, attribute, value, 'entity', unit.stamp)
    for subject, place in fallback_locations(unit.text, unit.entities):
        if (entity_key(subject), LOCATION) not in stated and (entity_key(subject), HOLDER) not in stated:
            add(subject, LOCATION, place, 'fallback', unit.stamp)
    # Where the places are: "on a bench on the front porch".
    places = [c.value for c in claims if c.attribute == LOCATION and c.source == 'text']
    for place, larger in nested_places(unit.text, unit.entities, places,
                                       placed={k for k, a in stated if a == LOCATION}):
        add(place, LOCATION, larger, 'fallback', unit.stamp)
    if unit.pose is not None and unit.type in _SPOKEN_TYPES:
        for entity in unit.entities:
            if entity.type != 'place' and entity.key and entity_key(entity.name) not in left:
                claims.append(Claim(entity.key, POSITION, format_pose(unit.pose), unit.stamp,
                                    unit.id, 'pose', CONFIDENCE['pose'], unit.pose))
    return claims


def _claimed_name(change: StateChange, unit: MemoryUnit, speaker: str) -> str:
    """The name a change's claim is filed under: a display's reading is its thing's state, and
    an owned thing its owner's ("my keys", "Emma's bottle", "her keys" of a person named)."""
    thing = change.object if change.attribute in PLACE_ATTRIBUTES else shown_by(change.object)
    whose = owner_of(unit.text, thing, speaker, [e.name for e in unit.entities if e.type == 'person'])
    return f"{whose}'s {thing}" if whose else thing


def _also_claimed(unit: MemoryUnit, change: StateChange, thing: str, *, placed: bool) -> list[str]:
    """Other things a change's claim holds for: what ``unit`` says the thing ``placed`` holds ("a
    bowl of grapes": the grapes), and what a door or lid opens ("the fridge door": the fridge)."""
    held = contents(unit.text, change.object, [e.name for e in unit.entities if e.type != 'place']) \
        if placed else []
    opens = opened_by(thing, change.after)
    return [*held, opens] if opens else held


# -- timelines -------------------------------------------------------------------------

def same_value(attribute: str, first: Claim, other: Claim) -> bool:
    """Whether ``other`` confirms the value ``first`` stated (positions: within a radius)."""
    if attribute == POSITION:
        if first.pose is None or other.pose is None:
            return first.value == other.value
        return first.pose.distance(other.pose) <= SIGHTING_RADIUS
    return value_key(attribute, first.value) == value_key(attribute, other.value)


def runs(claims: Iterable[Claim]) -> list[list[Claim]]:
    """Claims of one entity and attribute in time order (ties: unit id), cut where the value
    changes; a ``before`` claim opens a run only when nothing earlier is known."""
    ordered = sorted(claims, key=lambda c: (c.stamp, c.unit_id))
    groups: list[list[Claim]] = []
    for claim in ordered:
        if groups and same_value(claim.attribute, groups[-1][0], claim):
            groups[-1].append(claim)
        elif groups and claim.source == 'before':
            # "from the hallway" after "on the coat rack in the hallway": a coarser or
            # stale word for where it was, not a move; it only ever confirms.
            continue
        else:
            groups.append([claim])
    return groups


def timeline(claims: Iterable[Claim]) -> list[Fact]:
    """The facts that the claims of one entity and attribute give, oldest first.

    A run of claims of the same value is one fact, valid from its first claim until
    the first claim of the next value (see :func:`runs`).
    """
    groups = runs(claims)
    return [fact_of(group, groups[i + 1][0].stamp if i + 1 < len(groups) else None)
            for i, group in enumerate(groups)]


def fact_of(group: Sequence[Claim], valid_until: float | None) -> Fact:
    """One fact from the time-ordered claims of one value."""
    first, last = group[0], group[-1]
    posed = [c.pose for c in group if c.pose is not None]
    doubt = math.prod(1.0 - c.confidence for c in group)
    value = format_pose(posed[-1]) if first.attribute == POSITION and posed else last.value
    return Fact(entity=first.entity, attribute=first.attribute, value=value,
                valid_from=first.stamp, valid_until=valid_until,
                evidence=tuple(dict.fromkeys(c.unit_id for c in group)), last_seen=last.stamp,
                source=first.source, confidence=round(1.0 - doubt, 4),
                pose=posed[-1] if posed else None)


def answer_order(facts: Iterable[Fact], *, attribute: str | None = None,
                 as_of: float | None = None, asked: str = '') -> list[Fact]:
    """Facts as :meth:`BrainMem.state_of` returns them: what holds first, then history.

    What holds at ``as_of`` (or now: the open facts), places first, then other
    attributes, the one seen last first; then the rest, newest first. Facts that began
    after ``as_of`` are not part of the answer. ``asked``: the name the facts were asked
    for, whose last word may ask for one attribute ("the thermostat setpoint": its
    setting answers first).
    """
    wanted = asked_attribute(asked)
    exact = entity_key(asked) if asked else ''  # of two names seen at once, the one asked first
    chosen = [f for f in facts if attribute is None or f.attribute == attribute]
    if as_of is not None:
        chosen = [f for f in chosen if f.valid_from <= as_of]

    def holds(f: Fact) -> bool:
        return f.current if as_of is None else f.valid_at(as_of)

    def seen(f: Fact) -> float:
        # A fact keeps only its last sighting: one after as_of is not known then, and its
        # first is the last one known for sure.
        return f.last_seen if as_of is None or f.last_seen <= as_of else f.valid_from

    def place_rank(f: Fact) -> int:
        return PLACE_ATTRIBUTES.index(f.attribute) if f.attribute in PLACE_ATTRIBUTES else 9

    # Of the facts that hold, the one that began last first: the entities matched may be one
    # thing under a longer and a shorter name ("tv remote", "remote"), each with its own timeline.
    # Other attributes: the newest news first, and a state seen again is news ("boiling"
    # after "off" of the kettle's power, "off" again after "boiling").
    # Seen at once, a state or power answers before a setting or a reading ("started the
    # dishwasher on the quick cycle": running, on the quick cycle).
    now = sorted((f for f in chosen if holds(f)),
                 key=lambda f: (place_rank(f), f.attribute if place_rank(f) < 9 else '',
                                wanted.index(f.attribute) if f.attribute in wanted else len(wanted),
                                -f.valid_from if place_rank(f) < 9 else -seen(f),
                                f.attribute not in ('state', 'power'), f.attribute,
                                entity_key(f.entity) != exact, entity_key(f.entity), -f.last_seen))
    past = sorted((f for f in chosen if not holds(f)), key=lambda f: (-f.valid_from, -f.id))
    return now + past


def asked_attribute(name: str) -> tuple[str, ...]:
    """What the last word of ``name`` asks, best first ("oven temperature": a reading, else a setting)."""
    words = name.lower().split()
    return _ASKED_ATTRIBUTES.get(words[-1], ()) if len(words) > 1 else ()


# Words that end a name by asking for one attribute of the thing ("the oven temperature").
_ASKED_ATTRIBUTES = {'setpoint': ('setting',), 'setting': ('setting',), 'target': ('setting',),
                     'mode': ('state',), 'status': ('state',), 'state': ('state',),
                     'temperature': ('temperature', 'setting'), 'level': ('level',), 'power': ('power',)}
