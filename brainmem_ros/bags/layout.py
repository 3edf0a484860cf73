"""Find out how a bag on disk is stored: its storage format and its files, in order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from brainmem_ros.bags.errors import BagError

SUFFIXES = {'.db3': 'sqlite3', '.mcap': 'mcap'}
MAGICS = {'sqlite3': b'SQLite format 3\x00', 'mcap': b'\x89MCAP0\r\n'}


@dataclass(frozen=True)
class BagLayout:
    """A bag's storage format (``sqlite3`` or ``mcap``) and its storage files in split order."""

    storage: str
    files: tuple[Path, ...]


def locate(path: Path) -> BagLayout:
    """Return the layout of the bag at ``path`` (a rosbag2 directory or one storage file).

    Every file is checked to start like its storage format, so that a damaged or foreign
    file is reported before anything is read from it.
    """
    if path.is_dir():
        layout = _from_metadata(path) if (path / 'metadata.yaml').is_file() else _from_files(path)
    elif path.is_file():
        layout = BagLayout(_storage_of_file(path), (path,))
    else:
        msg = f'no bag at {path}: no such file or directory'
        raise BagError(msg)
    for file in layout.files:
        _check_magic(file, layout.storage)
    return layout


def _from_metadata(bagdir: Path) -> BagLayout:
    meta = bagdir / 'metadata.yaml'
    try:
        doc: Any = yaml.safe_load(meta.read_text(encoding='utf-8'))
    except OSError as err:
        msg = f'cannot read {meta}: {err.strerror}'
        raise BagError(msg) from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        msg = f'{meta} is not valid YAML: {err}'
        raise BagError(msg) from None
    info = doc.get('rosbag2_bagfile_information') if isinstance(doc, dict) else None
    names = info.get('relative_file_paths') if isinstance(info, dict) else None
    if not isinstance(info, dict) or not isinstance(names, list) or not names:
        msg = f'{meta} is not rosbag2 metadata (no relative_file_paths in it)'
        raise BagError(msg)
    mode = str(info.get('compression_mode') or '')
    if mode.lower() not in {'', 'none'}:
        msg = (
            f'{bagdir} is compressed ({mode} {info.get("compression_format")}), which is not '
            'supported; decompress it first (ros2 bag convert)'
        )
        raise BagError(msg)
    # Early rosbag2 versions stored paths prefixed with the bag directory's name; keeping
    # only the file name handles them and keeps every read inside the bag directory.
    files = tuple(bagdir / Path(str(name)).name for name in names)
    for file in files:
        if not file.is_file():
            msg = f'{meta} lists {file.name}, which is missing from {bagdir}'
            raise BagError(msg)
    storage = str(info.get('storage_identifier') or '') or _storage_of_suffixes(bagdir, files)
    if storage not in MAGICS:
        msg = f'{bagdir}: unknown storage {storage!r} (supported: {", ".join(MAGICS)})'
        raise BagError(msg)
    return BagLayout(storage, files)


def _from_files(bagdir: Path) -> BagLayout:
    """A directory without metadata.yaml (e.g. a recording that was killed): use its files."""
    files = tuple(sorted((p for p in bagdir.iterdir() if p.suffix in SUFFIXES), key=_split_order))
    if not files:
        msg = f'{bagdir} is not a rosbag2 bag: no metadata.yaml and no .db3 or .mcap file'
        raise BagError(msg)
    return BagLayout(_storage_of_suffixes(bagdir, files), files)


def _storage_of_suffixes(bagdir: Path, files: tuple[Path, ...]) -> str:
    storages = {SUFFIXES.get(file.suffix, '') for file in files}
    if len(storages) != 1 or '' in storages:
        msg = f'{bagdir}: cannot tell the storage from its files {[f.name for f in files]}'
        raise BagError(msg)
    return storages.pop()


def _storage_of_file(path: Path) -> str:
    if path.suffix in SUFFIXES:
        return SUFFIXES[path.suffix]
    head = _head(path)
    for storage, magic in MAGICS.items():
        if head.startswith(magic):
            return storage
    msg = (
        f'{path}: unknown bag storage (expected a rosbag2 directory, '
        'a sqlite3 .db3 file or an .mcap file)'
    )
    raise BagError(msg)


def _check_magic(path: Path, storage: str) -> None:
    if not _head(path).startswith(MAGICS[storage]):
        kind = {'sqlite3': 'a SQLite database', 'mcap': 'an MCAP file'}[storage]
        msg = f'{path} is not {kind}: the file is damaged or not a {storage} bag file'
        raise BagError(msg)


def _head(path: Path) -> bytes:
    try:
        with path.open('rb') as stream:
            return stream.read(max(len(m) for m in MAGICS.values()))
    except OSError as err:
        msg = f'cannot read {path}: {err.strerror}'
        raise BagError(msg) from None


def _split_order(path: Path) -> list[str | int]:
    """Natural order, so that ``bag_10.db3`` follows ``bag_9.db3``."""
    # re.split with a group alternates text and digits, so positions always compare alike.
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r'(\d+)', path.name))]
