"""The message of a log line whose header fields are cut off by pipes.

Many robot stacks print a line as fields between ``|``: a time stamp, a level, the node
or module, then the message ("3071.05 | arm_ctrl | release vial_red at centrifuge_rack OK",
"2024-05-01 10:00:00.123 | INFO | nav | arrived at the kitchen", "DELIV | order=MED-4412
item=insulin_pen status=LOADED"). Read whole, the header's words became things ("lab io",
"arm ctrl") and the module's name the owner of the message's fields ("lab_io | centrifuge_1
lid=CLOSED": the lab io's lid). The message alone is what the line says.

A header field is a time stamp or number, a log level, a tag in capitals, or (after the
first) one identifier that names no thing the lexicon knows ("arm_ctrl", "perception").
The first field must be a stamp, a level or a capital tag: "towel | on the floor" is a
thing and its place, not a header and a message.

>>> message('3071.05 | arm_ctrl | release vial_red at centrifuge_rack OK')
'release vial_red at centrifuge_rack OK'
>>> message('DELIV | order=MED-4412 item=insulin_pen status=LOADED')
'order=MED-4412 item=insulin_pen status=LOADED'
>>> message('towel | on the floor'), message('12.5 | sofa | remote on it')
('towel | on the floor', 'sofa | remote on it')
"""

from __future__ import annotations

import re

from brainmem_ros.encoders.lexicon import NOUN_TYPES
from brainmem_ros.encoders.reading_base import LOG_LEVELS
from brainmem_ros.encoders.record_flags import flag_value

_PIPE = re.compile(r'\s+\|\s+')
# A time stamp or a number: "3071.05", "2024-05-01 10:00:00.123", "12:04:55", "t=3012".
_STAMP = re.compile(r'^(?:t=|ts=)?[\d][\d\s.:T/+-]*Z?$')
_CAPS_TAG = re.compile(r'^[A-Z][A-Z0-9_]{1,11}$')
_IDENTIFIER = re.compile(r'^[A-Za-z][\w.:/-]*$')


def message(text: str) -> str:
    """``text`` without the header fields before its message (see the module), or as it is."""
    fields = _PIPE.split(text.strip())
    if len(fields) < 2 or not _opening(fields[0]):
        return text
    at = 1
    # (Not a flag's name before its value: "PLC_K1 | Fryer_2.Heater_On | FALSE -> TRUE".)
    while at < len(fields) - 1 and _header(fields[at]) and flag_value(fields[at + 1]) is None:
        at += 1
    rest = ' | '.join(fields[at:])
    # A message of one word is a field of a record (a state, a name), which reads with the rest.
    return rest if len(rest.split()) >= 2 else text


def _opening(field: str) -> bool:
    return bool(_STAMP.match(field)) or field.upper() in LOG_LEVELS or bool(_CAPS_TAG.match(field))


def _header(field: str) -> bool:
    if _opening(field):
        return True
    # (An identifier opens with a letter: its name has a last word.)
    name = field.replace('_', ' ').lower()
    return bool(_IDENTIFIER.match(field)) and name not in NOUN_TYPES and name.split()[-1] not in NOUN_TYPES
