"""Backend.scan: every matching document of an index, over several scroll pages, on both real engines;
and the rank_eval capability as each engine's probe reports it."""

from __future__ import annotations

import pytest

from base import CapabilityMissing
from indexer import Backend
from indexer.backends import RANK_EVAL, RatedRequest
from tests._support import ndjson

INDEX = "r2med-test-scan"
DOCS = 257  # more than two pages of 100


@pytest.fixture(scope="module")
def scanned(backend: Backend) -> Backend:
    backend.delete_index(INDEX, missing_ok=True)
    mappings = {"properties": {"n": {"type": "integer"}, "kind": {"type": "keyword"}}}
    backend.create_index(INDEX, settings={"number_of_shards": 2, "number_of_replicas": 0}, mappings=mappings)
    lines = []
    for n in range(DOCS):
        lines += [{"index": {"_index": INDEX, "_id": f"d{n}"}}, {"n": n, "kind": "odd" if n % 2 else "even"}]
    assert not backend.bulk(ndjson(lines), timeout_s=60).failed
    backend.refresh(INDEX)
    return backend


def test_scan_returns_every_document_once_across_pages(scanned: Backend) -> None:
    hits = list(scanned.scan(INDEX, page_size=100))
    assert sorted(int(h.id[1:]) for h in hits) == list(range(DOCS))
    assert all(h.source is not None and h.source["n"] == int(h.id[1:]) for h in hits)


def test_scan_filters_and_limits_the_source(scanned: Backend) -> None:
    hits = list(scanned.scan(INDEX, {"term": {"kind": "odd"}}, fields=["n"], page_size=50))
    assert len(hits) == DOCS // 2
    assert all(h.source is not None and set(h.source) == {"n"} and h.source["n"] % 2 for h in hits)


def _open_scrolls(backend: Backend) -> int:
    stats = backend._call("GET", "/_nodes/stats/indices/search", what="reading search stats")  # type: ignore[attr-defined]
    return sum(int(n["indices"]["search"]["scroll_current"]) for n in stats["nodes"].values())


def test_a_scan_abandoned_early_clears_its_scroll(scanned: Backend) -> None:
    before = _open_scrolls(scanned)
    scan = scanned.scan(INDEX, page_size=10)
    first = [next(scan) for _ in range(5)]
    assert len(first) == 5 and _open_scrolls(scanned) > before  # one context per shard, open
    scan.close()  # runs the generator's finally: the scroll is cleared
    assert _open_scrolls(scanned) == before


def test_an_empty_match_scans_nothing(scanned: Backend) -> None:
    assert list(scanned.scan(INDEX, {"term": {"kind": "none"}})) == []


def test_rank_eval_runs_where_the_probe_finds_the_module(scanned: Backend) -> None:
    caps = scanned.probe()
    request = RatedRequest("q", {"term": {"kind": "odd"}}, {"d1": 1, "d3": 0})
    metric = {"precision": {"k": 5, "relevant_rating_threshold": 1}}
    if not caps.has(RANK_EVAL):
        assert "rank-eval" in caps.missing[RANK_EVAL]
        with pytest.raises(CapabilityMissing, match="rank-eval"):
            scanned.rank_eval(INDEX, [request], metric)
        return
    result = scanned.rank_eval(INDEX, [request], metric)
    assert set(result.per_query) == {"q"} and len(result.hits["q"]) == 5
    assert not result.failures
