"""Nothing judged is lost: a log with refined queries (one search id, several texts) writes every judged pair."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cli import main


def _event(action: str, text: str, doc: str, rank: int, minute: int) -> dict[str, object]:
    return {
        "action_name": action,
        "query_id": "s1" if text.startswith("okra") else f"s-{text}",
        "user_query": text,
        "timestamp": f"2025-03-01T12:{minute:02d}:00Z",
        "client_id": f"c{minute}",
        "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": rank}},
    }


def test_every_pair_of_a_refined_query_is_written_and_the_counts_agree(tmp_path: Path, capsys) -> None:
    rows = []
    for minute in range(40):
        # one search id, refined from "okra" to "okra soup": both texts judged
        text = "okra" if minute % 2 else "okra soup"
        for rank, doc in enumerate(("d1", "d2", "d3"), 1):
            rows.append(_event("impression", text, doc, rank, minute))
        rows.append(_event("click", text, "d1" if minute % 3 else "d2", 1 if minute % 3 else 2, minute))
        rows.append(_event("impression", "kale", "d9", 1, minute))
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "clicks.qrels"
    assert (
        main(["clicks", "judgments", "--events", str(events), "--min-impressions", "1", "-o", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    judged = int(re.search(r"(\d+) \(query, document\) pairs judged", printed).group(1))
    written = len(out.read_text().splitlines())
    said = int(re.search(r"\(trec: (\d+) pairs", printed).group(1))
    assert judged == written == said
    kept = json.loads((tmp_path / "clicks.qrels.clicks.json").read_text())
    assert kept["pairs_written"] == written
    qids = {line.split()[0] for line in out.read_text().splitlines()}
    assert len(qids) == 2  # the click model merges a search id's pairs under one text; kale has its own
