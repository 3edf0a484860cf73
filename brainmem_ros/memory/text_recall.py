"""Lexical and entity recall: the candidates a query's words and named entities find.

Neither needs the query's vectors, so a Retrieve runs them on a thread of the
retriever while the encoder embeds the query (``Retriever._evidence``): SQLite and
ONNX Runtime both release the interpreter while they work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from brainmem_ros.memory.config import RetrievalConfig
from brainmem_ros.memory.lexicon import content_words
from brainmem_ros.memory.query import (
    MAX_TERMS,
    Query,
    fts_expression,
    fts_phrase,
    ideal_bm25,
    per_request,
)
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.store.fts_idf import fts5_idf, idf
from brainmem_ros.memory.synonyms import synonym_phrases
from brainmem_ros.memory.word_roles import PlaceDiscount


@dataclass(frozen=True)
class TextCandidates:
    """What the query's words and entities found, per unit id."""

    lexical: dict[int, float]  # the best BM25 matches: BM25 over the query's ideal, in [0, 1]
    window: dict[int, float]  # raw BM25 of every match the lexical search ranked
    ideal: float  # the BM25 an average memory holding every query term once would get
    entity: dict[int, float]  # share of the query's entity weight (IDF) mentioned, in [0, 1]
    places: PlaceDiscount | None = None  # what a memory naming the query's things as places keeps

    def kept(self, ids: Iterable[int], store: SqliteStore) -> dict[int, float]:
        """The share of its lexical evidence each of ``ids`` keeps, where below 1 (``places``)."""
        if self.places is None or not self.places.active:
            return {}
        return self.places.factors(store.unit_texts(ids))


def text_candidates(store: SqliteStore, cfg: RetrievalConfig, q: Query) -> TextCandidates:
    """BM25 matches of the query's content words and the units naming its entities."""
    unit_filter = q.filter
    lexical: dict[int, float] = {}
    window: dict[int, float] = {}
    ideal = 1.0
    places: PlaceDiscount | None = None
    words = [w for w in content_words(q.text) if len(w) > 2 or w.isdigit()][:MAX_TERMS]
    if words and cfg.lexical_candidates:
        words, term_counts = scanned_words(store, cfg, words)
        own = list(words)
        doc_counts = term_counts or store.term_document_counts(words)
        pooled = cfg.lexical_pool_idf > 0.0 and len(words) > 1
        term_idf: dict[str, float] | None = None
        caps: dict[str, float] | None = None
        alts = synonym_phrases(q.text, words) if cfg.lexical_synonyms > 0.0 else []
        searched = with_synonyms(store, cfg, words, alts) if alts else None
        if searched is not None:
            words, term_idf, caps = searched
        elif pooled:
            term_idf = phrase_idf(store, words, doc_counts)
        scored, window = store.fts_window(fts_expression(words), limit=per_request(cfg.lexical_candidates, q),
                                          unit_filter=unit_filter, pool_length=cfg.lexical_pool_length,
                                          term_idf=term_idf, pool_idf=cfg.lexical_pool_idf, term_caps=caps,
                                          ties=cfg.lexical_ties)
        if scored:
            # Of the query's own words: synonyms are other ways to say a word, not more of the
            # question, so a memory in the question's own words scores as it did.
            ideal = ideal_bm25(*doc_counts)
            lexical = {uid: min(1.0, bm25 / ideal) for uid, bm25 in scored}
            if cfg.lexical_places > 0.0:
                # The words' IDF as the search weighed them (a single word with no synonyms is
                # weighed by FTS5 alone: counted here).
                by_phrase = term_idf if term_idf is not None else phrase_idf(store, own, doc_counts)
                own_idf = {w: by_phrase[p] for w in own if (p := fts_phrase(w)) in by_phrase}
                syn = [(s, src, caps[fts_phrase(s)]) for s, src in alts if caps and fts_phrase(s) in caps]
                places = PlaceDiscount(store.terms_of, [t for t, _ in q.parts], own_idf, cfg.lexical_places,
                                       syn)
    entity: dict[int, float] = {}
    counts = store.entity_document_counts(q.entity_keys) if cfg.entity_candidates else {}
    if counts:
        # Rare entities say more than common ones ("the user" is in every other memory).
        total = store.max_id()
        weight = {k: idf(n, total) for k, n in counts.items()}
        mass = max(sum(weight.values()), idf(1, total))  # as for BM25: see ideal_bm25
        per_key = store.units_with_entities(list(counts), per_key=per_request(cfg.entity_candidates, q),
                                            unit_filter=unit_filter)
        for key, ids in per_key.items():
            for uid in ids:
                entity[uid] = entity.get(uid, 0.0) + weight[key] / mass
    found = TextCandidates(lexical, window, ideal, entity, places)
    for uid, keep in found.kept(lexical, store).items():
        lexical[uid] *= keep
    return found


def phrase_idf(store: SqliteStore, words: Sequence[str], counts: tuple[dict[str, int], int]
               ) -> dict[str, float]:
    """FTS5's store-wide IDF of each of ``words`` that some memory holds, keyed by its phrase in
    the FTS5 query (what the pool's term weights rescale: see ``fts_window``).

    ``counts`` are ``term_document_counts``: per index term, or per word in a store opened
    read-only (which cannot tokenize). A word of several index terms counts as its rarest.
    """
    held, total = counts
    return {p: fts5_idf(n, total) for p, n in _phrase_df(words, store.terms_of(words), held).items()}


def _phrase_df(words: Sequence[str], terms: Sequence[frozenset[str]] | None, held: dict[str, int]
               ) -> dict[str, int]:
    """The memories holding each of ``words`` that some memory holds, by its FTS5 phrase: its
    rarest index term's count (``terms``: each word's index terms; None, read-only: the word)."""
    out: dict[str, int] = {}
    for i, word in enumerate(words):
        keys = terms[i] if terms is not None else (word,)
        df = min((held.get(k, 0) for k in keys), default=0)
        if df:
            out[fts_phrase(word)] = df
    return out


def with_synonyms(store: SqliteStore, cfg: RetrievalConfig, words: list[str], alts: list[tuple[str, str]]
                  ) -> tuple[list[str], dict[str, float], dict[str, float]] | None:
    """The query words with the synonyms some memory holds, each phrase's IDF, and the cap
    on each synonym's weight: ``lexical_synonyms`` x the IDF of the word it stands for.

    The words, the synonyms and the words they stand for are tokenized and counted in one go.
    None for a store opened read-only, which cannot tokenize them.
    """
    texts = words + [s for s, _ in alts] + [src for _, src in alts]
    terms = store.terms_of(texts)
    if terms is None:
        return None
    held, total = store.term_document_counts(texts)
    df = _phrase_df(texts, terms, held)
    idf = {p: fts5_idf(n, total) for p, n in df.items()}
    out_idf = {p: idf[p] for p in map(fts_phrase, words) if p in idf}
    caps: dict[str, float] = {}
    kept = list(words)
    for syn, source in alts:
        phrase = fts_phrase(syn)
        if phrase not in df or df[phrase] >= cfg.lexical_max_df:
            continue
        out_idf[phrase] = idf[phrase]
        caps[phrase] = cfg.lexical_synonyms * min(idf[phrase], idf.get(fts_phrase(source), idf[phrase]))
        kept.append(syn)
    return kept, out_idf, caps


def scanned_words(store: SqliteStore, cfg: RetrievalConfig, words: list[str]
                  ) -> tuple[list[str], tuple[dict[str, int], int] | None]:
    """The query words the lexical search scans: all but those in too many memories.

    The search ranks only the newest matches of the query (``fts_window``), so a word
    in ``lexical_max_df`` memories or more would fill them with its own newest
    occurrences, crowding out the matches of the rare words that lexical recall is
    for, and make the scan slow (at 1M bench units, words in 8-10% of the memories
    took it from 2.3 to 6.7 ms). Such words still count through the vector evidence.
    Small stores (below the limit) scan every word; if every word is that common,
    all are scanned. Also returns the document counts of the scanned words' index
    terms and the store's size, when it had to count them (None otherwise).
    """
    limit = cfg.lexical_max_df
    if store.max_id() <= limit:
        return words, None
    terms = store.terms_of(words)
    if terms is None:
        return words, None  # a read-only store cannot tokenize: scan all
    counts, total = store.term_document_counts(words)
    kept = [(w, t) for w, t in zip(words, terms, strict=True)
            if max((counts.get(x, 0) for x in t), default=0) < limit]
    if not kept:
        return words, (counts, total)
    held = {x for _, t in kept for x in t}
    return [w for w, _ in kept], ({x: n for x, n in counts.items() if x in held}, total)
