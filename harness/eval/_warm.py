"""ranx, ready before the scores need it: imported and its kernels compiled on a thread, early in a run.

ranx fuses and scores with numba kernels. A fresh machine compiles them (about a minute of CPU on two
cores; numba then keeps them on disk, as ranx asks), and every process still imports ranx with numba,
pandas, scipy and matplotlib (about 5 s) and loads them; numba's typed containers, which numba itself never
keeps, are kept on disk by :mod:`._ranx` (4 s saved per process after the first). Paid where the run first
fuses, that came after the last search (56 s on a fresh machine).
:func:`warm_ranx` pays it on a daemon thread while the engine is probed, the data planned and the index
built: the same calls as the run's (its fusions, its measures) on a few synthetic queries of the same
types, so each kernel it will use is compiled once, early. :func:`ranx_ready` waits for that thread;
the run calls it before its first call into ranx, so no two threads ever run ranx at once.
(``bench/first_run.py`` measures what it saves; docs/development.md has the figures.)
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Sequence

from ._evaluate import evaluate
from ._fusion import FusionSpec, fuse
from ._measures import DEFAULT_MEASURES, Measure

#: numba's note that ranx hashes document ids (uint64 -> int64), harmless here; a compilation on this
#: thread would print it outside the run's own ``quiet_ranx`` blocks, so it is silenced for the process
NUMBA_HASH_NOTE = "unsafe cast from uint64 to int64"

_started = threading.Lock()
_thread: threading.Thread | None = None


def _queries(n: int = 4) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    """Qrels and two arms' runs of ``n`` queries, with the types a run has (str ids, int grades, float
    scores): what decides which kernels numba compiles, whatever the sizes."""
    qrels = {f"q{i}": {f"d{i}": 1, f"d{i + 1}": 2} for i in range(n)}
    runs = {
        arm: {f"q{i}": {f"d{j}": float(10 - j + k) for j in range(i, i + 5)} for i in range(n)}
        for k, arm in enumerate(("lexical", "vector"))
    }
    return qrels, runs


def _work(fusions: Sequence[FusionSpec | str], measures: Sequence[Measure | str]) -> None:
    qrels, runs = _queries()
    try:
        for spec in fusions:
            evaluate(qrels, fuse(runs, spec), measures)
        evaluate(qrels, runs["lexical"], measures)
    except Exception:  # the run's own call meets it again, and says so where it belongs
        pass


def warm_ranx(
    fusions: Iterable[FusionSpec | str] = (), measures: Sequence[Measure | str] = DEFAULT_MEASURES
) -> bool:
    """Start importing ranx and compiling what ``fusions`` and ``measures`` need, on a daemon thread (once
    per process; later calls do nothing). Returns whether this call started it."""
    global _thread
    with _started:
        if _thread is not None:
            return False
        warnings.filterwarnings("ignore", message=NUMBA_HASH_NOTE)
        work = (list(fusions), list(measures))
        _thread = threading.Thread(target=_work, args=work, name="ranx-warm-up", daemon=True)
        _thread.start()
        return True


def ranx_ready() -> None:
    """Wait until the warm-up thread (if one was started) is done; call before a run's first use of ranx."""
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()
