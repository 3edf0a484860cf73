"""The schema's old home: it lives in :mod:`brainmem_ros.memory.store.schema`."""

from brainmem_ros.memory.store.schema import MIGRATIONS, SCHEMA_V1, SCHEMA_V2_FACTS, SCHEMA_VERSION

__all__ = ['MIGRATIONS', 'SCHEMA_V1', 'SCHEMA_V2_FACTS', 'SCHEMA_VERSION']
