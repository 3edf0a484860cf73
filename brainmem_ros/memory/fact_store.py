"""The fact layer's storage, now :mod:`brainmem_ros.memory.store.facts` (names kept here)."""

from brainmem_ros.memory.store.facts import REBUILD_KEY, FactStore, observe_facts

__all__ = ['REBUILD_KEY', 'FactStore', 'observe_facts']
