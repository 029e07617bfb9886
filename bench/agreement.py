"""Do two runs agree? Per arm: nDCG@10 of each and their difference, and the share of queries whose
top-k (ids, in order) is identical, from the run directories' ``results.json`` and TREC files.

    python bench/agreement.py RUN_A RUN_B [--arm lexical] [--k 10] [--max-ndcg-diff 0.002] [--min-identical 0.95]

Made for issue 11's cross-engine check: the same dataset, analysis chain and flags run once against
Elasticsearch and once against OpenSearch (both Lucene BM25, so the lexical rankings must agree).
Top-k lists are compared as the TREC files rank them (rank order, ties as each engine broke them).
Exits 1 when a threshold given on the command line is missed; prints every figure either way.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from base import slug
from harness.results import RunResults


@dataclass(frozen=True, slots=True)
class Agreement:
    dataset: str
    arm: str
    ndcg_a: float
    ndcg_b: float
    queries: int
    identical: int  # queries whose top-k is the same list in both runs

    @property
    def ndcg_diff(self) -> float:
        return abs(self.ndcg_a - self.ndcg_b)

    @property
    def identical_share(self) -> float:
        return self.identical / self.queries if self.queries else 1.0


def read_trec(path: Path) -> dict[str, list[str]]:
    """qid -> document ids in rank order."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if len(parts) != 6:
            raise SystemExit(f"{path}:{lineno}: expected 'qid Q0 doc rank score tag', found {line!r}")
        rows.setdefault(parts[0], []).append((int(parts[3]), parts[2]))
    return {qid: [doc for _, doc in sorted(docs)] for qid, docs in rows.items()}


def top_k_identical(a: dict[str, list[str]], b: dict[str, list[str]], k: int) -> tuple[int, int]:
    """(queries with identical top-k, queries in either run)."""
    qids = set(a) | set(b)
    return sum(a.get(q, [])[:k] == b.get(q, [])[:k] for q in qids), len(qids)


def compare(run_a: Path, run_b: Path, arms: list[str] | None, k: int) -> list[Agreement]:
    results_a, results_b = RunResults.load(run_a), RunResults.load(run_b)
    out = []
    for dataset, data_a in results_a.datasets.items():
        data_b = results_b.datasets.get(dataset)
        if data_b is None:
            continue
        for arm in arms or [a for a in data_a.arms if a in data_b.arms]:
            trec = Path("runs") / slug(dataset) / f"{arm}.trec"
            same, total = top_k_identical(read_trec(run_a / trec), read_trec(run_b / trec), k)
            out.append(
                Agreement(
                    dataset,
                    arm,
                    data_a.arms[arm].metrics["ndcg@10"],
                    data_b.arms[arm].metrics["ndcg@10"],
                    total,
                    same,
                )
            )
    if not out:
        raise SystemExit(f"{run_a} and {run_b} share no dataset and arm")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument(
        "--arm", action="append", help="arm to compare (repeatable; default: every shared arm)"
    )
    parser.add_argument("--k", type=int, default=10, help="top-k compared (default 10)")
    parser.add_argument("--max-ndcg-diff", type=float, default=None)
    parser.add_argument("--min-identical", type=float, default=None, help="share of queries, 0..1")
    args = parser.parse_args(argv)
    engines = [RunResults.load(p).manifest.engine.capabilities for p in (args.run_a, args.run_b)]
    print(f"A: {args.run_a} ({engines[0].flavour} {engines[0].version})")
    print(f"B: {args.run_b} ({engines[1].flavour} {engines[1].version})")
    ok = True
    for g in compare(args.run_a, args.run_b, args.arm, args.k):
        print(
            f"{g.dataset} {g.arm}: nDCG@10 A {g.ndcg_a:.4f} B {g.ndcg_b:.4f} (|diff| {g.ndcg_diff:.4f}); "
            f"identical top-{args.k}: {g.identical}/{g.queries} ({100 * g.identical_share:.1f}%)"
        )
        if args.max_ndcg_diff is not None and g.ndcg_diff > args.max_ndcg_diff:
            print(f"  NOT met: nDCG@10 differs by more than {args.max_ndcg_diff}")
            ok = False
        if args.min_identical is not None and g.identical_share < args.min_identical:
            print(f"  NOT met: fewer than {100 * args.min_identical:.0f}% identical top-{args.k}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
