"""The seams between the memory core and its models."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from brainmem_ros.memory.types import EdgeKind, Extraction


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return an array of shape ``(len(texts), dim)``, each row of unit norm."""
        ...


@runtime_checkable
class BatchEmbedder(Protocol):
    """An embedder that can compute a batch ahead of the ``embed`` calls that will ask for it.

    The topic ingest primes the encoder with a batch on one thread while another parses
    the batch before (the encoder releases the GIL, the parser does not).
    """

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """As :meth:`Embedder.embed`; primed texts are looked up, not computed again."""
        ...

    def prime(self, texts: Sequence[str]) -> None:
        """Compute the vectors of ``texts`` now, for the ``embed`` calls that follow."""
        ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder with a session of its own for Retrieve's queries (latency first)."""

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """As :meth:`Embedder.embed` (the same vectors), on the query session."""
        ...


def embed_query(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """The vectors of a query's texts: on the embedder's query session if it has one."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_query(texts)
    return embedder.embed(texts)


class Extractor(Protocol):
    """Pulls grounded entities, actions, state changes and outcome from one text."""

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Return what ``text`` says; never invent what is not in it (or in ``known_entities``)."""
        ...


class TextReader(Protocol):
    """An extractor that also says which words and lemmas a text has (grounding)."""

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """Entities, actions, state changes and outcome stated in ``text``."""
        ...

    def words(self, text: str) -> frozenset[str]:
        """Surface words and token lemmas of ``text``, lower case."""
        ...


@runtime_checkable
class BatchExtractor(Protocol):
    """An extractor that parses a batch at once (spaCy's ``nlp.pipe``) before ``extract``."""

    def prime(self, texts: Sequence[str]) -> None:
        """Parse ``texts`` now so that ``extract`` of each of them finds the parse ready."""
        ...

    def extract(self, text: str, *, known_entities: Sequence[str] = ()) -> Extraction:
        """As :meth:`Extractor.extract`."""
        ...


@dataclass(frozen=True)
class Relation:
    """An inferred link from one unit to another, with the model's confidence."""

    kind: EdgeKind | None  # None: no relation
    confidence: float


@dataclass(frozen=True)
class Insight:
    """A reflection: a higher-level statement and the indices of its evidence."""

    text: str
    evidence: tuple[int, ...]


class Reasoner(Protocol):
    """The slow, optional LLM: relation inference and reflection."""

    def relate(self, first: str, second: str) -> Relation:
        """How ``first`` relates to ``second``: precondition, causes, analogy, opposite or none."""
        ...

    def reflect(self, texts: Sequence[str]) -> list[Insight]:
        """Insights drawn from ``texts``; evidence refers to positions in ``texts``."""
        ...
