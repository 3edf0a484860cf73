"""What a log line's record fields state, merged with what the parser read in the same line.

:func:`merged` keeps the record reader's changes (:mod:`~brainmem_ros.encoders.log_records`)
and the parser's that say something else.
"""

from __future__ import annotations

import re

from brainmem_ros.memory.types import StateChange

# A detection's confidence, whose number the parser might read as a level: bracketed after
# the thing ("blender (87%)"), or a field of its own ("Conf: 93%").
_BRACKETED_CONFIDENCE = re.compile(r'\((\d{1,3}(?:\.\d+)?\s?%|[01]?\.\d+)\)')
_CONFIDENCE_FIELD = re.compile(r'\b(?:conf(?:idence)?|p|prob|score)\s*[:=]\s*([\d.]+\s?%?)', re.IGNORECASE)
# How a task or a subsystem is doing, not a thing's state: "sweep done", "cameras OK",
# "status=SUCCESS" of a task.
PROCESS_STATES = frozenset({'done', 'ok', 'fine', 'nominal', 'success', 'succeeded', 'successful',
                            'completed', 'complete', 'finished'})

# A name as the parser may wrongly make one of a record ("vlm diff(prev = t0", "| room temp").
_CLEAN_NAME = re.compile(r"^[\w' -]+$")
_MARKS = re.compile(r'[|={}<>\[\]]')
_JSON_OBJECT = re.compile(r'^\s*\{.*\}\s*$', re.DOTALL)
# The keys of a record's fields ("entity_id=", "\"new_state\":"), which name no thing or value.
_KEYS = re.compile(r'\b([A-Za-z_]\w*)\s*=|"([A-Za-z_]\w*)"\s*:')


def merged(text: str, records: list[StateChange], parsed: tuple[StateChange, ...]) -> tuple[StateChange, ...]:
    """The record's changes and the parser's that say something else.

    A parser change is dropped when the record gives the same thing's same attribute, or
    gives its value to another thing (one "OPEN" in the line is one thing's state), when
    its thing's name or its value holds a record's punctuation or is a field's key
    ("entity_id=... new_state=off" places no "entity id" at a "new state"), when it reads a
    confidence as a level ("Conf: 93%", "blender (87%)"), or a task's progress as a thing's
    state ("sweep done") in a record. A record that is one JSON object says all it says in
    its fields (and its prose in quotes): the parse of its punctuation adds nothing ('"data":
    {...}' read as a "datum" switched off). The last change of a thing's attribute wins.
    """
    if _JSON_OBJECT.match(text):
        parsed = ()
    said = {(c.object, c.attribute) for c in records}
    values = {(c.attribute, c.after) for c in records}
    # A bracketed number after a thing the record reports is its detection's confidence
    # ("blender (87%) beside the toaster"); after another ("Battery low (15%)"), a level.
    confidences = _as_readings(_CONFIDENCE_FIELD.findall(text))
    detected = _as_readings(_BRACKETED_CONFIDENCE.findall(text))
    things = {c.object for c in records}
    keys = {(a or b).replace('_', ' ').lower() for a, b in _KEYS.findall(text)}
    kept = [c for c in parsed if (c.object, c.attribute) not in said and (c.attribute, c.after) not in values
            and _CLEAN_NAME.match(c.object) and not _MARKS.search(c.after)
            and c.object not in keys and c.after not in keys
            and not (records and c.after in PROCESS_STATES)
            and not (c.attribute == 'level' and (
                c.after in confidences or (c.after in detected and c.object in things)))]
    out: dict[tuple[str, str], StateChange] = {}
    for change in [*kept, *records]:
        out.pop((change.object, change.attribute), None)
        out[(change.object, change.attribute)] = change
    return tuple(out.values())


def _as_readings(numbers: list[str]) -> set[str]:
    """Numbers as the parser writes readings ("93%" -> "93 %")."""
    return {' '.join(n.replace('%', ' %').split()) for n in numbers}
