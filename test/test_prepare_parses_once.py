"""A Store parses each text once, whitespace around it or not (``BrainMem.prepare``)."""

from __future__ import annotations

from typing import Any

from brainmem_ros.encoders.parsed import SpacyExtractor
from brainmem_ros.memory.types import ObservationInput


class _CountingPipeline:
    """spaCy's pipeline, counting the texts parsed one by one (not in a primed batch)."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self.single: list[str] = []

    def __call__(self, text: str) -> Any:
        self.single.append(text)
        return self.nlp(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nlp, name)


def test_a_batch_with_surrounding_whitespace_is_parsed_once(mem_factory: Any) -> None:
    extractor = SpacyExtractor()
    counting = _CountingPipeline(extractor._nlp)
    extractor._nlp = counting  # type: ignore[assignment]
    mem = mem_factory(extractor=extractor)
    texts = ['  Put the blue cup in the sink.  ', '\tOpened the fridge in the kitchen.\n',
             'Closed the garage door.']
    results = mem.store_many([ObservationInput(t, stamp=1_000.0 + i) for i, t in enumerate(texts)])
    assert [r.unit.text for r in results] == [t.strip() for t in texts]  # type: ignore[union-attr]
    assert counting.single == []  # each found its parse from the batch (nlp.pipe)
