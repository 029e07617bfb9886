"""Click models on logs small enough to compute by hand: COEC, raw CTR, and the rules of what a log shows."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from base import ConfigError
from harness.judgments.clicks import ClickModelSpec, UbiSource, judge_clicks, observe
from harness.keys import table_of
from indexer import UbiEvent, UbiLog, UbiQuery

AT = datetime(2025, 3, 1, 12, tzinfo=UTC)


def _search(sid: str, text: str, shown: list[str], clicked: list[str], at: datetime = AT) -> list[UbiEvent]:
    events = [UbiEvent("impression", sid, at, d, r, text) for r, d in enumerate(shown, 1)]
    return events + [UbiEvent("click", sid, at, d, shown.index(d) + 1, text) for d in clicked]


def _hand_log() -> UbiLog:
    """Query "q": 4 searches showing [a, b]; "p": 4 searches showing [c, a]. Clicks: a at rank 1 twice,
    b at rank 2 once, c at rank 1 once, a at rank 2 twice."""
    events = []
    events += _search("s1", "q", ["a", "b"], ["a"]) + _search("s2", "q", ["a", "b"], ["a", "b"])
    events += _search("s3", "q", ["a", "b"], []) + _search("s4", "q", ["a", "b"], [])
    events += _search("s5", "p", ["c", "a"], ["c", "a"]) + _search("s6", "p", ["c", "a"], ["a"])
    events += _search("s7", "p", ["c", "a"], []) + _search("s8", "p", ["c", "a"], [])
    return UbiLog((), tuple(events), "hand")


def test_the_prior_is_the_whole_logs_ctr_per_rank() -> None:
    seen = observe(_hand_log(), ClickModelSpec())
    assert seen.rank_impressions == (8, 8) and seen.rank_clicks == (3, 3)
    assert seen.prior == (3 / 8, 3 / 8) and seen.overall_ctr == 6 / 16


def test_coec_by_hand() -> None:
    # a second rank gets fewer clicks: make rank 2 rarer by adding searches where it is never clicked
    extra = [e for n in range(8) for e in _search(f"x{n}", "z", ["y", "w"], ["y"])]
    log = UbiLog((), _hand_log().events + tuple(extra), "hand")
    got = judge_clicks(log, ClickModelSpec(min_impressions=1, cuts=(0.5, 1.5))).by_query()
    # prior: rank 1 (3 + 8) / 16, rank 2 3 / 16
    r1, r2 = 11 / 16, 3 / 16
    a_q, b_q, a_p = got["q"]["a"], got["q"]["b"], got["p"]["a"]
    assert a_q.expected == pytest.approx(4 * r1) and a_q.score == pytest.approx(2 / (4 * r1))
    assert b_q.expected == pytest.approx(4 * r2) and b_q.score == pytest.approx(1 / (4 * r2))
    assert a_p.score == pytest.approx(2 / (4 * r2))  # the same 2 clicks at rank 2 are worth more
    assert (a_q.grade, b_q.grade, a_p.grade) == (1, 1, 2)  # 0.73 -> 1, 1.33 -> 1, 2.67 -> 2
    assert got["q"]["a"].impressions == 4 and got["q"]["a"].clicks == 2


def test_raw_ctr_ignores_the_rank() -> None:
    extra = [e for n in range(8) for e in _search(f"x{n}", "z", ["y", "w"], ["y"])]
    log = UbiLog((), _hand_log().events + tuple(extra), "hand")
    got = judge_clicks(log, ClickModelSpec(model="ctr", min_impressions=1)).by_query()
    overall = 14 / 32
    assert got["q"]["a"].score == pytest.approx((2 / 4) / overall)
    assert got["p"]["a"].score == got["q"]["a"].score  # 2 of 4 either way, whatever the rank


def test_repeated_events_count_once_and_clicks_imply_impressions() -> None:
    events = _search("s1", "q", ["a", "b"], ["b"]) + _search("s1", "q", ["a", "b"], ["b"])  # re-fired
    events += [UbiEvent("click", "s2", AT, "c", 3, "q")]  # a click with no impression event
    events += [UbiEvent("click", "", AT, "a", 1, "q")]  # no query_id: cannot be placed in a search
    seen = observe(UbiLog((), tuple(events)), ClickModelSpec())
    counts = {(p.query, p.doc_id): (p.impressions_at, p.clicks) for p in seen.pairs}
    assert counts == {("q", "a"): ({1: 1}, 0), ("q", "b"): ({2: 1}, 1), ("q", "c"): ({3: 1}, 1)}
    assert seen.searches == 2 and seen.no_query_id == 1


def test_searches_without_impressions_show_their_hit_ids() -> None:
    rows = (
        UbiQuery("s1", "okra  sugar", AT, ("a", "b", "c")),  # whitespace collapsed: one query with s2
        UbiQuery("s2", "okra sugar", AT, ("b", "a")),
        UbiQuery("s3", "late", datetime(2025, 4, 1, tzinfo=UTC), ("a",)),  # outside the window
    )
    clicks = (
        UbiEvent("click", "s1", AT, "b", 2),
        UbiEvent("click", "s9", AT, "z", 1),
    )  # s9: no text anywhere
    spec = ClickModelSpec(max_rank=2, end=date(2025, 3, 31))
    seen = observe(UbiLog(rows, clicks), spec)
    counts = {(p.query, p.doc_id): (p.impressions_at, p.clicks) for p in seen.pairs}
    assert counts == {("okra sugar", "a"): ({1: 1, 2: 1}, 0), ("okra sugar", "b"): ({2: 1, 1: 1}, 1)}
    assert seen.searches == 2 and seen.no_text == 1


def test_pairs_below_the_minimum_are_left_out() -> None:
    got = judge_clicks(_hand_log(), ClickModelSpec(min_impressions=5))
    assert got.items == () and got.too_few_impressions == 4
    assert len(judge_clicks(_hand_log(), ClickModelSpec(min_impressions=4)).items) == 4


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ({"model": "dbn"}, "judgments.model: expected one of coec, ctr, found 'dbn'"),
        ({"max_rank": 0}, r"judgments.max_rank: expected 1\.\.1000, found 0"),
        ({"cuts": [2, 1]}, "judgments.cuts: expected increasing score cut points"),
        ({"cuts": "two"}, "judgments.cuts: expected a number, found str 'two'"),
        ({"start": "March"}, "judgments.start: expected a date YYYY-MM-DD"),
        (
            {"start": "2025-03-02", "end": "2025-03-01"},
            "judgments.start: expected judgments.start <= judgments.end",
        ),
        ({"maxrank": 3}, "judgments.maxrank: unknown key: expected one of model, max_rank"),
    ],
)
def test_a_spec_table_names_the_key_in_error(table: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        table_of(ClickModelSpec, table, "judgments")


def test_a_spec_and_source_from_tables() -> None:
    spec = table_of(ClickModelSpec, {"model": "ctr", "max_rank": 10, "start": "2025-03-01", "cuts": [1, 3]})
    assert spec == ClickModelSpec("ctr", 10, date(2025, 3, 1), None, 5, (1.0, 3.0))
    assert spec.top_grade == 2 and spec.event_filter().max_rank == 10
    source = table_of(UbiSource, {"events": "logs/ev.jsonl"}, base=Path("/data"))
    assert str(source.events) == "/data/logs/ev.jsonl" and not source.in_index
    assert table_of(UbiSource, {"events_index": "ubi_events"}).in_index
    assert table_of(UbiSource, {}).events_in == "ubi_events"  # no log named: the cluster's own indices
    with pytest.raises(ConfigError, match=r"judgments\.events: expected the UBI log from one place"):
        table_of(UbiSource, {"events": "a.jsonl", "events_index": "ubi_events"}, "judgments")
