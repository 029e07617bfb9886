"""Order-independent content hashes, computable while streaming.

Each record is hashed on its own (sha256 of a canonical JSON encoding); the
digests are summed modulo 2**256 and the sum is hashed with the record count.
Summing (rather than XOR) keeps two identical records from cancelling out.
"""

from __future__ import annotations

import hashlib
import json

_MOD = 1 << 256


class OrderFreeHash:
    """Accumulates records in any order; :meth:`hexdigest` is the same for any permutation."""

    __slots__ = ("_count", "_kind", "_sum")

    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._sum = 0
        self._count = 0

    def add(self, *fields: object) -> None:
        encoded = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._sum = (self._sum + int.from_bytes(hashlib.sha256(encoded).digest(), "big")) % _MOD
        self._count += 1

    def hexdigest(self) -> str:
        return hashlib.sha256(f"{self._kind}:{self._count}:{self._sum:064x}".encode()).hexdigest()


def combine(**parts: str) -> str:
    """One hash over named part hashes (the names are part of the input)."""
    text = "|".join(f"{name}={value}" for name, value in sorted(parts.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def qrels_hash(qrels: dict[str, dict[str, int]]) -> str:
    """The order-free hash of a set of judgments (the ``qrels`` part of a dataset fingerprint)."""
    h = OrderFreeHash("qrels")
    for qid, graded in qrels.items():
        for docid, grade in graded.items():
            h.add(qid, docid, grade)
    return h.hexdigest()
