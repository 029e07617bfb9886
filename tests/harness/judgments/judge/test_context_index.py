"""``--context-fields`` read from the index, on both real engines: any field the documents hold, fetched
by id; a document the index lacks is skipped, never judged on nothing. And from a run's own index, the
judge reads what it reads from the dataset: the same prompts, so the cached answers serve both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer import Backend, load_dataset
from tests._openai_server import OpenAIServer
from tests.harness.judgments.judge.conftest import run_judge, truth_of

INDEX = "r2med-judge-context"


def _index(backend: Backend, ids: list[str]) -> None:
    backend.delete_index(INDEX, missing_ok=True)
    properties = {"title": {"type": "text"}, "abstract": {"type": "text"}, "year": {"type": "integer"}}
    backend.create_index(
        INDEX,
        settings={"number_of_shards": 1, "number_of_replicas": 0},
        mappings={"properties": {**properties, "tags": {"type": "keyword"}}},
    )
    lines = []
    for i, doc in enumerate(ids):
        lines.append(json.dumps({"index": {"_index": INDEX, "_id": doc}}))
        source = {"title": f"Title {doc}", "abstract": f"Abstract of {doc} from the index.", "year": 2000 + i}
        lines.append(json.dumps({**source, "tags": ["alpha", "beta"]}))
    backend.bulk(("\n".join(lines) + "\n").encode())
    backend.refresh(INDEX)


def test_fields_from_the_index_on_each_engine(
    backend: Backend,
    server: OpenAIServer,
    gate_data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    truth = truth_of(gate_data)
    server.state.judge_labels = truth
    pairs = list(truth)[:12]
    _index(backend, [d for _, d in pairs[:10]])  # the last two documents are not in the index
    path = tmp_path / "pairs.trec"
    path.write_text("".join(f"{q} 0 {d}\n" for q, d in pairs))
    args = ["--pairs", str(path), "--dataset", str(gate_data), "--llm", "truth", "--url", backend.url]
    args += ["--context-source", "index", "--index", INDEX, "--context-fields", "title,abstract,year,tags"]
    code, text = run_judge(capsys, server, tmp_path / "c", tmp_path / "o", *args)
    assert code == 0, text
    assert "2 skipped (no document text)" in text and server.state.calls["chat"] == 10
    users = [next(m["content"] for m in b["messages"] if m["role"] == "user") for b in server.state.bodies]
    doc = pairs[0][1]
    block = next(u for u in users if f'<document id="{doc}">' in u)
    assert (
        f"title: Title {doc}\nabstract: Abstract of {doc} from the index.\nyear: 2000\ntags: alpha beta"
        in block
    )
    code, text = run_judge(
        capsys, server, tmp_path / "c", tmp_path / "o2", *args[:-4], "--index", "no-such-index"
    )
    assert code == 2 and "the cluster has no index 'no-such-index'" in text
    backend.delete_index(INDEX, missing_ok=True)


def test_a_runs_own_index_gives_the_datasets_text(
    es_url: str, base_run: Path, server: OpenAIServer, gate_data: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    server.state.judge_labels = truth_of(gate_data)
    args = [str(base_run), "--arms", "hybrid", "--llm", "truth", "--depth", "3"]
    code, text = run_judge(
        capsys, server, tmp_path / "c", tmp_path / "o", *args, "--context-source", "index", "--url", es_url
    )
    assert code == 0, text
    n = server.state.calls["chat"]
    assert n == 3 * len(load_dataset(str(gate_data)).qrels)
    code, text = run_judge(capsys, server, tmp_path / "c", tmp_path / "o2", *args)
    assert code == 0 and server.state.calls["chat"] == n, (
        "the dataset's fields make the same prompts: all cached"
    )
    assert f"{n:,} answers cached, 0 calls to make" in text
