"""`harness index` and `harness run` with the user's own mapping (``--mapping``, ``--field-map``), on both
real engines: the lexical arm searches the mapped title and text fields, the vector arm the mapped vector
field, and the mapping and its field map are part of the run's identity. SciFact cut: 150 abstracts, 20
test claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.experiment import experiment, identity
from harness.results import Manifest, RunResults, load_ranking, trec_path
from harness.strategies import LEXICAL_FIELDS, Lexical, QueryInput, SearchContext, TextFields, Vector
from indexer import Backend
from tests._mappings import FIELDS, team_body
from tests._support import scifact_subset

DATASET = "mapped-subset"


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("mapped") / DATASET, n_docs=150, n_test=20, n_train=0)


def _run(url: str, mode: str, data: Path, out: Path, *extra: str) -> RunResults:
    argv = ["run", mode, "--dataset", str(data), "--output", str(out), "--url", url]
    assert main([*argv, "--records", "jsonl", "--no-progress", *extra]) == 0
    return RunResults.load(out)


def _top10(run_dir: Path, arm: str) -> dict[str, list[str]]:
    return {q: docs[:10] for q, docs in load_ranking(trec_path(run_dir, DATASET, arm)).items()}


def test_runs_search_the_users_fields(engine_url: str, backend: Backend, cut: Path, tmp_path: Path) -> None:
    mapping = tmp_path / "team.json"
    mapping.write_text(json.dumps(team_body(backend)), encoding="utf-8")
    user = ["--mapping", str(mapping), "--field-map", FIELDS]
    assert main(["index", "--dataset", str(cut), "--url", engine_url, "--no-progress", *user]) == 0
    for stats in backend.list_indices("r2med-mapped-subset-team-*"):
        assert set(backend.get_mapping(stats.name).properties) == {"headline", "body", "emb"}

    lexical = _run(engine_url, "lexical", cut, tmp_path / "lex", *user)
    # our title_text field does not exist in their index: a lexical arm searching it would find nothing
    assert lexical.datasets[DATASET].arms["lexical"].metrics["ndcg@10"] > 0.4
    assert lexical.datasets[DATASET].arms["lexical"].empty_queries == ()
    manifest = Manifest.load(tmp_path / "lex" / "manifest.json")
    assert manifest.config["user_mapping"]["field_map"] == {
        "title": "headline",
        "text": "body",
        "vector": "emb",
    }
    assert manifest.analysis is not None and manifest.analysis.startswith("custom:")

    # the same vectors in their `emb` field and in ours rank alike (exact: candidates cover the cut)
    theirs = _run(engine_url, "vector", cut, tmp_path / "vec", *user)
    ours = _run(engine_url, "vector", cut, tmp_path / "vec-ours")
    assert _top10(tmp_path / "vec", "vector") == _top10(tmp_path / "vec-ours", "vector")
    assert theirs.manifest.config_hash != ours.manifest.config_hash

    swapped = ["--mapping", str(mapping), "--field-map", "title=body,text=headline,vector=emb"]
    other = _run(engine_url, "lexical", cut, tmp_path / "lex-swapped", *swapped)
    assert other.manifest.config_hash != lexical.manifest.config_hash, "another field map is another run"


def test_a_bad_mapping_fails_the_run_before_anything_is_created(
    engine_url: str, backend: Backend, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mapping = tmp_path / "wide.json"
    mapping.write_text(json.dumps(team_body(backend, dims=768)), encoding="utf-8")
    before = {s.name for s in backend.list_indices("r2med-mapped-subset-wide*")}
    argv = [
        "run",
        "vector",
        "--dataset",
        str(cut),
        "--url",
        engine_url,
        "--no-progress",
        "--records",
        "jsonl",
    ]
    code = main([*argv, "--output", str(tmp_path / "run"), "--mapping", str(mapping), "--field-map", FIELDS])
    assert code != 0
    assert f"{mapping}: mappings.properties.emb." in capsys.readouterr().err
    assert before == set() and backend.list_indices("r2med-mapped-subset-wide*") == []


def test_the_lexical_and_vector_bodies_name_the_mapped_fields() -> None:
    theirs = TextFields("body", "headline", combined=None)
    ctx = SearchContext(depth=10, text_fields=theirs, vector_field="emb")
    for name in LEXICAL_FIELDS:
        body = Lexical(SearchContext(depth=10, lexical_field=name, text_fields=theirs)).body(
            QueryInput("q", "fever")
        )
        assert body["query"]["multi_match"]["fields"] == ["headline", "body"]
    untitled = SearchContext(depth=10, text_fields=TextFields("body", None, None))
    assert Lexical(untitled).body(QueryInput("q", "x"))["query"]["multi_match"]["fields"] == ["body"]
    assert Vector(ctx).knn(QueryInput("q", "x", (0.1, 0.2))).field == "emb"
    assert Lexical(SearchContext(depth=10)).query("x") == {"match": {"title_text": {"query": "x"}}}


def test_the_mapping_is_in_the_run_identity_and_refuses_what_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"mappings": {"properties": {"body": {"type": "text"}}}}), encoding="utf-8")
    base = {"mode": "lexical", "data.datasets": ["sample"]}
    plain = experiment(values=base)
    mapped = experiment(values={**base, "index.mapping": str(path), "index.field_map": "text=body"})
    assert "user_mapping" not in identity(plain), "runs without a mapping keep their config hash"
    assert identity(mapped)["user_mapping"]["field_map"] == {"title": None, "text": "body", "vector": None}
    with pytest.raises(
        ConfigError, match=r"--field-map text=body: says where --set index.mapping=VALUE keeps"
    ):
        experiment(
            flags={"mode": ("lexical", "MODE lexical")},
            settings=[_old("index.field_map=text=body", "--field-map text=body")],
        )
    with pytest.raises(ConfigError, match=r"expected no index.analysis, index.bm25 r2med with it"):
        experiment(
            values={
                **base,
                "index.mapping": str(path),
                "index.field_map": "text=body",
                "index.analysis": "standard",
                "index.bm25": "r2med",
            }
        )
    with pytest.raises(ConfigError, match=r"m.json: mappings.properties.text is missing"):
        experiment(values={**base, "index.mapping": str(path)})


def _old(text: str, written: str) -> str:
    from harness.cli._options import SetEntry

    return SetEntry(text, written)
