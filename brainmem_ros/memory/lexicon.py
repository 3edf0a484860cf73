"""Query words: the package's stop-word list (a data file) and the word pattern."""

from __future__ import annotations

import re

from brainmem_ros.memory.wordlists import sections

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
# Retrieval drops only the function words of the shared list; its other sections
# (placeholders, abstract nouns of robot logs, units) are words no *entity* is made of,
# but a query about "the temperature" or "the failure" is about exactly those words.
_QUERY_SECTION = 'function words'


def stopword_sections() -> dict[str, frozenset[str]]:
    """The sections of ``brainmem_ros/data/stopwords.txt``: ``# -- name`` starts one."""
    return sections('stopwords.txt')


def query_stopwords() -> frozenset[str]:
    """Words that carry no topic in a query (English function words)."""
    sections = stopword_sections()
    return sections.get(_QUERY_SECTION) or frozenset().union(*sections.values())


def content_words(text: str) -> list[str]:
    """The lower-cased words of ``text`` that are not stop-words, in order, once each."""
    stop = query_stopwords()
    words = [w.lower() for w in WORD.findall(text)]
    return [w for w in dict.fromkeys(words) if (len(w) > 1 or w.isdigit()) and w not in stop]
