"""Nothing judged is lost: a log with refined queries (one search id, several texts) writes every judged pair,
merges a search id's texts by the rule the output states (console line and ``.clicks.json``), and every count
printed is the count in the files written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from harness.cli import main

#: search id of each text: "okra soup" refined to "okra" (s1), "beet" to "beet juice" and "beets" (s2)
SEARCH_OF = {"okra soup": "s1", "okra": "s1", "beet": "s2", "beet juice": "s2", "beets": "s2", "kale": "s3"}


def _event(action: str, text: str, doc: str, rank: int, minute: int) -> dict[str, object]:
    return {
        "action_name": action,
        "query_id": SEARCH_OF[text],
        "user_query": text,
        "timestamp": f"2025-03-01T12:{minute:02d}:00Z",
        "client_id": f"c{minute}",
        "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": rank}},
    }


def _log(tmp_path: Path) -> Path:
    rows = []
    for minute in range(40):
        okra = "okra soup" if minute % 2 == 0 else "okra"  # "okra soup" first in the log
        for rank, doc in enumerate(("d1", "d2", "d3"), 1):
            rows.append(_event("impression", okra, doc, rank, minute))
        rows.append(_event("click", okra, "d1" if minute % 3 else "d2", 1 if minute % 3 else 2, minute))
        beet = ("beet", "beet juice", "beets")[minute % 3]  # "beet" first
        rows.append(_event("impression", beet, "d4" if minute % 2 else "d5", 1, minute))
        rows.append(_event("impression", "kale", "d9", 1, minute))
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return events


def test_every_pair_of_a_refined_query_is_written_and_the_counts_agree(tmp_path: Path, capsys) -> None:
    events = _log(tmp_path)
    out = tmp_path / "clicks.qrels"
    argv = ["clicks", "judgments", "--events", str(events), "--min-impressions", "1"]
    assert main([*argv, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    judged = int(re.search(r"(\d+) \(query, document\) pairs judged", printed).group(1))
    written = len(out.read_text().splitlines())
    said = int(re.search(r"\(trec: (\d+) pairs", printed).group(1))
    assert judged == written == said == 6  # okra soup: d1-d3, beet: d4-d5, kale: d9
    kept = json.loads((tmp_path / "clicks.qrels.clicks.json").read_text())
    assert kept["pairs_written"] == kept["pairs"] == written

    # the rule, in one console line and in the summary, with the same counts
    lines = [line for line in printed.splitlines() if "refined queries:" in line]
    assert len(lines) == 1, printed
    found = re.search(
        r"refined queries: (\d+) search ids carried several query texts \((\d+) after", lines[0]
    )
    assert found is not None, lines[0]
    refined = kept["refined_queries"]
    assert (
        (int(found.group(1)), int(found.group(2)))
        == (refined["search_ids"], refined["later_texts"])
        == (2, 3)
    )
    assert refined["rule"] in lines[0] and "first text" in refined["rule"]

    # the rule as applied: each search id's pairs are under its first text, the later texts have none
    quepid = tmp_path / "clicks.csv"
    assert main([*argv, "-o", str(quepid), "--format", "quepid"]) == 0
    with quepid.open(newline="") as fh:
        texts = {row["query"] for row in csv.DictReader(fh)}
    assert texts == {"okra soup", "beet", "kale"}
    assert len(quepid.read_text().splitlines()) - 1 == written


def test_a_log_without_refined_queries_says_nothing_of_them(tmp_path: Path, capsys) -> None:
    rows = [_event("impression", "kale", "d9", 1, minute) for minute in range(5)]
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "clicks.qrels"
    assert (
        main(["clicks", "judgments", "--events", str(events), "--min-impressions", "1", "-o", str(out)]) == 0
    )
    assert "refined queries" not in capsys.readouterr().out
    kept = json.loads((tmp_path / "clicks.qrels.clicks.json").read_text())
    assert (kept["refined_queries"]["search_ids"], kept["refined_queries"]["later_texts"]) == (0, 0)
