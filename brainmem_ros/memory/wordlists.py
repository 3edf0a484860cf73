"""The core's versioned word lists: sections of the text files in ``brainmem_ros/data/``.

A file is read once. ``# -- name`` starts a section; one entry a line, lower-cased;
``#`` starts a comment.

>>> 'against' in word_list('fact_words.txt', 'spatial prepositions')
True
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def sections(file: str) -> dict[str, frozenset[str]]:
    """Every section of ``brainmem_ros/data/<file>``, by name."""
    found: dict[str, set[str]] = {}
    current = ''
    text = resources.files('brainmem_ros').joinpath('data', file).read_text(encoding='utf-8')
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith('# --'):
            current = line[4:].strip()
            found.setdefault(current, set())
            continue
        word = line.split('#', 1)[0].strip().lower()
        if word:
            found.setdefault(current, set()).add(word)
    return {name: frozenset(words) for name, words in found.items()}


def word_list(file: str, section: str) -> frozenset[str]:
    """One section of ``brainmem_ros/data/<file>``; a missing section is a packaging error."""
    try:
        return sections(file)[section]
    except KeyError:
        msg = f'brainmem_ros/data/{file} has no section {section!r}'
        raise KeyError(msg) from None
