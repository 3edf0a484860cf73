"""What a task record that reports success says its task did to its thing.

Task executors and home automation log an action with its arguments as fields:
``TASK#416 close item=back_door status=SUCCESS``, ``call_service service=turn_off
target=light.porch``, ``fetch item=dog_lead to=user:Aroha status=done``. The verb says
what the thing's state is once the task is done (closed, locked, off), and a task that
brought or handed a thing to a person leaves it with that person. Only a record that says
the task succeeded states that: the executor's log also records what it was asked and
what failed. :func:`undone` tells a record that says it did not happen (a task that failed
or waits, a detection rejected), of which nothing is read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import HELD
from brainmem_ros.encoders.record_fields import CONFIDENCE, PLACE_KEYS, THING_KEYS, Field, person
from brainmem_ros.memory.types import StateChange


class Namer(Protocol):
    """What names a record's thing and place (:class:`~brainmem_ros.encoders.log_records.RecordReader`)."""

    def thing(self, text: str, *, keyed: bool = False) -> str:
        """``text`` as the name of a thing, or ''."""
        ...

    def place(self, text: str, *, keyed: bool = False) -> str:
        """``text`` as the name of a place, or ''."""
        ...


# The state a thing is in once the task named by the verb is done: (attribute, value).
_DONE_STATES = {
    'open': ('state', 'open'), 'close': ('state', 'closed'), 'shut': ('state', 'closed'),
    'lock': ('state', 'locked'), 'unlock': ('state', 'unlocked'),
    'turn_on': ('power', 'on'), 'switch_on': ('power', 'on'), 'power_on': ('power', 'on'),
    'turn_off': ('power', 'off'), 'switch_off': ('power', 'off'), 'power_off': ('power', 'off'),
}
# Verbs of a task that leaves its thing in the robot's gripper.
_HOLDING = frozenset({'pick', 'pickup', 'grasp', 'grab', 'lift'})
# Verbs of a task that leaves its thing where the record's place field says ("place succeeded:
# object=blue_mug target=dishwasher_top_rack").
_PLACING = frozenset({'place', 'put', 'putdown', 'drop', 'stow', 'store'})
# Verbs of a task that leaves its thing with the person it is for.
_HANDING = frozenset({'fetch', 'bring', 'deliver', 'hand', 'handover', 'give', 'serve'})
# Keys of the person such a task is for ("deliver_to=Maya"); a bare name there is a person's.
_HANDED_TO = frozenset({f'{verb}_to' for verb in _HANDING})
_SUCCESS = frozenset({'success', 'succeeded', 'successful', 'ok', 'done', 'complete', 'completed',
                      'finished'})
_OUTCOME_KEYS = frozenset({'status', 'result', 'outcome'})
# A task's outcome that says it did not happen, or not yet, under a key of outcomes.
_UNDONE = frozenset({'queued', 'pending', 'scheduled', 'planned', 'waiting', 'aborted', 'cancelled',
                     'canceled', 'failed', 'failure', 'error', 'timeout', 'timed_out', 'rejected', 'skipped',
                     'not_found', 'notfound', 'missing'})
# A failure or refusal the call returned ("target=light.porch -> error: device unreachable",
# "switch.sprinkler turn_on -> blocked (rain delay)"); a thing's own state may be "blocked"
# ("exit: clear -> blocked"), a call's outcome only after the call's snake_case name.
_FAILED_AFTER = re.compile(r'(?:->|=>|→)\s*(?:error|fail(?:ed|ure)?|fault|timeout|denied|refused)\b|'
                           r'\b[a-z]+_[a-z_]+\s*(?:->|=>|→)\s*blocked\b', re.IGNORECASE)
# A field of its own that drops the whole record ("| REJECTED (p<0.60)", "DISCARDED low_conf"),
# or the verdict right after a confidence ("p=0.31 discarded (p<0.60)").
_DROPPED = frozenset({'rejected', 'discarded', 'ignored', 'dropped', 'filtered', 'invalid'})
# A task only asked for, or a search that found nothing: what the line names did not happen.
_ASKED = frozenset({'queued', 'scheduled', 'planned', 'pending', 'request', 'requested', 'awaiting'})
_NOT_FOUND = re.compile(r'\bnot (?:found|detected|seen)\W*$', re.IGNORECASE)  # the line's verdict
# A behaviour tree's node names its task in CamelCase ("node=PickObject", "node=HandOver").
_VERB_KEYS = frozenset({'service', 'action', 'task', 'cmd', 'command', 'node', 'behavior', 'behaviour',
                        'skill'})
# (Before any capital after a small letter, unlike a name's words run together in
# record_names: the verb is the first word, whatever follows it, "PickTV".)
_CAMEL = re.compile(r'(?<=[a-z])(?=[A-Z])')
#: Keys of what software is asked to do, which name no thing ("domain=light service=turn_off").
CALL_KEYS = _VERB_KEYS | {'domain', 'job', 'type'}
_TARGET_KEYS = THING_KEYS | {'target', 'entity_id', 'device'}


def task_changes(reader: Namer, fields: list[Field], *, subject: str = '') -> list[StateChange]:
    """The state a successful task record leaves its thing in (see the module); none unless
    the record has a verb, a thing and (but for a service call) an outcome of success.

    The thing is a target field's, else the record's ``subject``: a command log names the
    device first and the action as a field ("[CMD] skylight.kitchen action=close status=ok").
    """
    leading = _leading_outcome(fields)
    verb = _verb(fields, leading)
    thing = next((t for k, v in fields if k in _TARGET_KEYS and (t := reader.thing(v, keyed=True))), '') \
        or subject
    if not verb or not thing:
        return []
    outcomes = [v.strip().lower() for k, v in fields if k in _OUTCOME_KEYS] + leading
    called = any(k == 'service' for k, _ in fields)
    if not (called and not outcomes) and not any(o in _SUCCESS for o in outcomes):
        return []
    if verb in _DONE_STATES:
        attribute, value = _DONE_STATES[verb]
        return [StateChange(thing, attribute, '', value)]
    if verb in _HOLDING:
        return [StateChange(thing, 'location', '', HELD)]  # "grasp OK object=red_cup"
    if verb in _PLACING:
        places = [reader.place(v, keyed=True) for k, v in fields if k in PLACE_KEYS]
        return [StateChange(thing, 'location', '', p) for p in places[:1] if p]
    # A task's "to" names a person when tagged ("to=user:Aroha"), or when a name that is no
    # word of a thing or a room ("to=Mia"; not "to=Kitchen").
    who = next((p for k, v in fields if (k == 'to' and (p := person(v, bare=_no_thing(v))))
                or (k in _HANDED_TO and (p := person(v)))), '')
    return [StateChange(thing, 'location', '', who)] if verb in _HANDING and who else []


def _no_thing(word: str) -> bool:
    """``word`` is no noun of a household thing or room ("Mia", not "Kitchen")."""
    return word.strip().lower() not in NOUN_TYPES


def _verb(fields: list[Field], leading: list[str]) -> str:
    """The task's verb: a verb key's value ("service=turn_off"), else the last word of the
    record's leading field ("TASK#416 close"), before its ``leading`` outcome ("grasp OK")."""
    for key, value in fields:
        if key in _VERB_KEYS and value.strip():
            return _bare_verb(_CAMEL.sub('_', value.strip()).lower().split('.')[-1])
    if fields and fields[0][0] is None and fields[0][1].split():
        words = fields[0][1].split()[:-1] if leading else fields[0][1].split()
        return _bare_verb(words[-1].lower().rstrip(':'))
    return ''


def _leading_outcome(fields: list[Field]) -> list[str]:
    """A success word ending the record's leading field after its verb ("grasp OK object=...")."""
    words = fields[0][1].split() if fields and fields[0][0] is None else []
    last = words[-1].lower().rstrip(':') if words else ''  # ("place succeeded: object=...")
    return [last] if len(words) >= 2 and last in _SUCCESS else []


def _bare_verb(word: str) -> str:
    """"deliver_keys", "fetch_object": the verb without its thing ("turn_off" stays whole)."""
    return word if word in _DONE_STATES else word.split('_', 1)[0]


def undone(fields: Sequence[Field]) -> bool:
    """A record's fields say it did not happen: "fetch item=dog_lead status=ABORTED", "... pred=off
    | REJECTED (p<0.60)", "score=0.22 dropped=true", "pred=open p=0.31 discarded", "target=light.porch
    -> error: unreachable"."""
    return any((k in _OUTCOME_KEYS and v.strip().lower() in _UNDONE) or _FAILED_AFTER.search(v)
               or (k is None and {words[0].lower(), words[-1].lower()} & _DROPPED)
               or (k is None and words[0].lower().rstrip(':') in _ASKED)  # "queued: deliver package ..."
               or _NOT_FOUND.search(v)  # ">> SEARCH remote control in living room ... NOT FOUND"
               or (k in _DROPPED and words[0].lower() in {'true', 'yes', '1'})
               or (len(words) > 1 and CONFIDENCE.match(words[0]) and words[1].lower() in _DROPPED)
               for k, v in fields if (words := v.split()))
