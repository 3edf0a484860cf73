"""Lexical and entity recall: the candidates a query's words and named entities find.

Neither needs the query's vectors, so a Retrieve runs them on a thread of the
retriever while the encoder embeds the query (``Retriever._evidence``): SQLite and
ONNX Runtime both release the interpreter while they work.
"""

from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True)
class TextCandidates:
    """What the query's words and entities found, per unit id."""

    lexical: dict[int, float]  # the best BM25 matches: BM25 over the query's ideal, in [0, 1]
    window: dict[int, float]  # raw BM25 of every match the lexical search ranked
    ideal: float  # the BM25 an average memory holding every query term once would get
    entity: dict[int, float]  # share of the query's entity weight (IDF) mentioned, in [0, 1]


def text_candidates(store: SqliteStore, cfg: RetrievalConfig, q: Query) -> TextCandidates:
    """BM25 matches of the query's content words and the units naming its entities."""
    unit_filter = q.filter
    lexical: dict[int, float] = {}
    window: dict[int, float] = {}
    ideal = 1.0
    words = [w for w in content_words(q.text) if len(w) > 2 or w.isdigit()][:MAX_TERMS]
    if words and cfg.lexical_candidates:
        words, term_counts = scanned_words(store, cfg, words)
        doc_counts = term_counts or store.term_document_counts(words)
        pooled = cfg.lexical_pool_idf > 0.0 and len(words) > 1
        term_idf = phrase_idf(store, words, doc_counts) if pooled else None
        caps: dict[str, float] | None = None
        # Synonyms stay out of the ideal: they are other ways to say a query word, not more
        # of the question, so a memory in the question's own words scores as it did.
        ideal_counts = doc_counts
        alts = synonym_phrases(q.text, words) if cfg.lexical_synonyms > 0.0 else []
        if alts:
            words, term_idf, caps = with_synonyms(store, cfg, words, alts, term_idf)
        scored, window = store.fts_window(fts_expression(words), limit=per_request(cfg.lexical_candidates, q),
                                          unit_filter=unit_filter, pool_length=cfg.lexical_pool_length,
                                          term_idf=term_idf, pool_idf=cfg.lexical_pool_idf, term_caps=caps)
        if scored:
            ideal = ideal_bm25(*ideal_counts)
            lexical = {uid: min(1.0, bm25 / ideal) for uid, bm25 in scored}
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
    return TextCandidates(lexical, window, ideal, entity)


def phrase_idf(store: SqliteStore, words: Sequence[str], counts: tuple[dict[str, int], int]
               ) -> dict[str, float]:
    """FTS5's store-wide IDF of each of ``words`` that some memory holds, keyed by its phrase in
    the FTS5 query (what the pool's term weights rescale: see ``fts_window``).

    ``counts`` are ``term_document_counts``: per index term, or per word in a store opened
    read-only (which cannot tokenize). A word of several index terms counts as its rarest.
    """
    held, total = counts
    terms = store.terms_of(words)
    out: dict[str, float] = {}
    for i, word in enumerate(words):
        keys = terms[i] if terms is not None else (word,)
        df = min((held.get(k, 0) for k in keys), default=0)
        if df:
            out[fts_phrase(word)] = fts5_idf(df, total)
    return out


def with_synonyms(store: SqliteStore, cfg: RetrievalConfig, words: list[str], alts: list[tuple[str, str]],
                  term_idf: dict[str, float] | None
                  ) -> tuple[list[str], dict[str, float] | None, dict[str, float] | None]:
    """The query words with the synonyms some memory holds, each phrase's IDF, and the cap
    on each synonym's weight: ``lexical_synonyms`` x the IDF of the word it stands for."""
    texts = words + [s for s, _ in alts] + [src for _, src in alts]
    terms = store.terms_of(texts)
    if terms is None:
        return words, term_idf, None  # read-only store: cannot weigh the synonyms
    held, total = store.term_document_counts(texts)

    def df(i: int) -> int:
        return min((held.get(k, 0) for k in terms[i]), default=0)

    out_idf = dict(term_idf) if term_idf else {fts_phrase(w): fts5_idf(df(i), total)
                                               for i, w in enumerate(words) if df(i)}
    caps: dict[str, float] = {}
    kept = list(words)
    n = len(words)
    for j, (syn, _) in enumerate(alts):
        d = df(n + j)
        if not d or d >= cfg.lexical_max_df:
            continue
        own = fts5_idf(d, total)
        d_src = df(n + len(alts) + j)
        base = fts5_idf(d_src, total) if d_src else own
        phrase = fts_phrase(syn)
        out_idf[phrase] = own
        caps[phrase] = cfg.lexical_synonyms * min(own, base)
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
