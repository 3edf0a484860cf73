"""Questions whose answer is one routine memory: the other side of recall among routine.

The scenario cases ask for the one memory that stands out from weeks of routine; a
planner also asks about the routine itself ("where did I put the mug in the kitchen?").
Each question here is made from one background observation by its template, so the
answer is that observation, among hundreds that differ from it by a word or two.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

# (pattern of a routine sentence, the question it answers); groups fill the question.
PATTERNS: tuple[tuple[str, str], ...] = (
    (r'^Picked up the (.+) from the (.+) in the (.+)\.$', 'where did I pick up the {0} in the {2}?'),
    (r'^Put the (.+) on the (.+) in the (.+)\.$', 'where did I put the {0} in the {2}?'),
    (r'^Moved the (.+) to the (.+)\.$', 'where did I move the {0} to?'),
    (r'^Tidied the (.+) away into the (.+)\.$', 'where did I tidy the {0} away?'),
    (r'^Wiped the (.+) in the (.+)\.$', 'did I wipe the {0} in the {1}?'),
    (r'^Brought the (.+) to the user in the (.+)\.$', 'did I bring the {0} to the user in the {1}?'),
    (r'^Opened the (.+) and closed it again\.$', 'did I open the {0}?'),
    (r'^Vacuumed the floor of the (.+)\.$', 'when did I vacuum the {0}?'),
    (r'^Carried the (.+) from the (.+) to the (.+)\.$', 'where did I carry the {0} from the {1}?'),
)


@dataclass(frozen=True)
class RoutineQuestion:
    """A question and the routine text that answers it."""

    question: str
    answer: str


def routine_questions(texts: Iterable[str], n: int, *, seed: int = 7) -> list[RoutineQuestion]:
    """``n`` questions, each made from a different one of ``texts`` (fixed seed)."""
    distinct = sorted(set(texts))
    random.Random(seed).shuffle(distinct)
    out: list[RoutineQuestion] = []
    for text in distinct:
        for pattern, question in PATTERNS:
            if m := re.match(pattern, text):
                out.append(RoutineQuestion(question.format(*m.groups()), text))
                break
        if len(out) == n:
            break
    return out
