"""ranx, imported once per process with numba's typed containers kept on disk.

ranx builds its runs and qrels as ``numba.typed.Dict`` and ``numba.typed.List``. numba compiles those
containers' methods (``_make_dict``, ``_contains``, ``_getitem``, ...) in every process and, unlike ranx's
own kernels (``njit(cache=True)``), keeps none of them: about 4 s of one core per process on these
machines, the larger part of a warm ``harness run`` after its searches. They are ordinary numba
dispatchers, so :func:`ranx` has numba cache them as it caches ranx's kernels (in ``__pycache__`` beside
numba's source, or numba's user-wide cache where that is read-only; keyed by the signature and the CPU, so
another machine's code is never loaded). A process that cannot cache (no writable place) compiles them as
before. ``bench/first_run.py`` measures the warm run with it; docs/development.md has the figures.
"""

from __future__ import annotations

import contextlib
import threading
from types import ModuleType

_lock = threading.Lock()
_done = False


def _cache_containers() -> None:
    """Turn numba's disk cache on for the typed containers' compiled methods."""
    import numba.typed.typeddict as typeddict
    import numba.typed.typedlist as typedlist
    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    for module in (typeddict, typedlist):
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and isinstance(getattr(value, "_cache", None), NullCache):
                with contextlib.suppress(RuntimeError):  # numba found no writable place for the cache
                    value.enable_caching()


def ranx() -> ModuleType:
    """The ``ranx`` module, numba's containers cached first (once per process, from any thread)."""
    global _done
    with _lock:
        if not _done:
            _cache_containers()
            _done = True
    import ranx as module

    return module
