"""Every error brainmem_ros raises on purpose derives from BrainMemError."""

from __future__ import annotations


class BrainMemError(Exception):
    """Base class of all brainmem_ros errors."""


class ConfigError(BrainMemError):
    """A configuration value is missing, of the wrong type or out of range."""


class InvalidInputError(BrainMemError):
    """A request carried a value the memory cannot accept (empty text, NaN pose...)."""


class UnknownIdError(InvalidInputError):
    """One or more memory ids do not exist."""

    def __init__(self, msg: str, ids: tuple[int, ...]) -> None:
        super().__init__(msg)
        self.ids = ids


class StoreError(BrainMemError):
    """The SQLite store could not be opened, read or written."""


class BusyError(BrainMemError):
    """The work asked for is already under way (a consolidation cycle): asked again, it
    would run twice over the same units."""


class StoreInUseError(StoreError):
    """The data directory is held by another open memory (another process, most often)."""


class SchemaVersionError(StoreError):
    """The database was written by a newer (or unknown) schema version."""


class VectorIndexError(BrainMemError):
    """The vector index file is missing, damaged or disagrees with the store."""


class ModelError(BrainMemError):
    """An on-device model (ONNX encoder, GGUF LLM) is missing or failed to run."""


class ExtractionError(BrainMemError):
    """The extractor produced no usable output (timeout, invalid JSON...)."""
