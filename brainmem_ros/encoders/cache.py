"""A small thread-safe LRU map for memoising encoder results."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar('K', bound=Hashable)
V = TypeVar('V')


class LruCache(Generic[K, V]):
    """Keeps the ``capacity`` most recently used entries; capacity 0 disables it."""

    def __init__(self, capacity: int) -> None:
        self._capacity = max(0, capacity)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value for ``key`` (marking it recently used), or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry."""
        if self._capacity == 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
