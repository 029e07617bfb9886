"""Several judges' labels of one pair made one: by mean, majority, min or max.

Only labels on the scale take part: a judge whose answer did not parse gives nothing for the pair
(it is not counted as any grade). A pair no judge labelled gets no combined label. Ties go down,
so that disagreement never raises a grade: the mean is rounded to the nearest label with halves
rounded down, and a majority tie goes to the lowest of the tied labels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from base import ConfigError

Combiner = Callable[[Sequence[int]], int]


def _mean(labels: Sequence[int]) -> int:
    return math.ceil(sum(labels) / len(labels) - 0.5)


def _majority(labels: Sequence[int]) -> int:
    counts = Counter(labels)
    most = max(counts.values())
    return min(label for label, n in counts.items() if n == most)


#: how several labels of one pair become one
COMBINERS: dict[str, Combiner] = {"mean": _mean, "majority": _majority, "min": min, "max": max}


def combiner(name: str, where: str = "--combine") -> Combiner:
    found = COMBINERS.get(name.strip().lower())
    if found is None:
        raise ConfigError(f"expected {where} among {', '.join(COMBINERS)}, found {name!r}")
    return found


def combine(labels: Sequence[int | None], how: Combiner) -> int | None:
    """The combined label of one pair, from the labels that parsed (None: none did)."""
    given = [label for label in labels if label is not None]
    return how(given) if given else None
