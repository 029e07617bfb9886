"""`harness run --experiment` end to end on the real Elasticsearch, on a cut of the real SciFact
(120 abstracts, 20 test claims): template arms give the built-in arms' runs line for line, a
function_score template takes its params, your own index (other field names, a custom analyzer,
another id field) is searched with your own queries and judgments, and every bad input is a clear
error that leaves no run directory behind."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from base import CapabilityMissing, ConfigError, DataError
from harness import RunError
from harness.cli import main
from harness.experiment import Experiment, experiment
from harness.results import RunResults, trec_path
from harness.run import run
from harness.templates import builtin_path
from indexer import Backend, ConnectionSettings
from tests._support import REPO, scifact_subset

DATASET = "experiment-subset"
OWN_INDEX = "exp-test-own-index"


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("exp") / DATASET, n_docs=120, n_test=20, n_train=0)


def _experiment(folder: Path, body: str, name: str = "exp.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body)
    return path


def _run(es_url: str, experiment: Path, out: Path, *extra: str) -> int:
    args = ["run", "--experiment", str(experiment), "--output", str(out), "--url", es_url, "--no-progress"]
    return main([*args, "--records", "jsonl", *extra])


def _load(path: Path, out: Path) -> Experiment:
    """The experiment at ``path`` as ``harness run --experiment PATH --output OUT --records jsonl --quiet``."""
    flags = {
        "output.dir": (str(out), "--output"),
        "output.records": ("jsonl", "--records"),
        "output.quiet": (True, "--quiet"),
    }
    return experiment(path, flags=flags)


def _lines(run_dir: Path, dataset: str, arm: str) -> list[str]:
    return [" ".join(line.split()[:5]) for line in trec_path(run_dir, dataset, arm).read_text().splitlines()]


@pytest.fixture(scope="module")
def builtin_run(es_url: str, cut: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "builtin"
    args = ["run", "hybrid", "--dataset", str(cut), "--output", str(out), "--url", es_url]
    assert main([*args, "--records", "jsonl", "--no-progress", "--no-ann-recall"]) == 0
    return out


#: the built-in arms written as template arms, fused into "hybrid" (the fusion method is added by each use)
LEXICAL_VECTOR_HYBRID = """
datasets = ["{cut}"]

[[arms]]
name = "lexical"
template_file = "builtin:lexical"

[[arms]]
name = "vector"
template_file = "builtin:vector"
model = "minilm"

[[fused]]
name = "hybrid"
inputs = ["lexical", "vector"]
"""

BUILTIN_AS_TEMPLATES = LEXICAL_VECTOR_HYBRID + 'fusion = "rrf"\n'


def test_template_arms_give_the_builtin_arms_runs_line_for_line(
    es_url: str, cut: Path, builtin_run: Path, tmp_path: Path
) -> None:
    exp = _experiment(tmp_path, BUILTIN_AS_TEMPLATES.format(cut=cut))
    assert _run(es_url, exp, tmp_path / "out") == 0
    for arm in ("lexical", "vector", "hybrid"):
        ours, builtin = _lines(tmp_path / "out", DATASET, arm), _lines(builtin_run, DATASET, arm)
        assert len(ours) >= 20 * 10 and ours == builtin, arm
    mine, theirs = RunResults.load(tmp_path / "out"), RunResults.load(builtin_run)
    for arm in ("lexical", "vector", "hybrid"):
        assert mine.datasets[DATASET].arms[arm].metrics == theirs.datasets[DATASET].arms[arm].metrics
    target = mine.datasets[DATASET].arms["lexical"].target
    assert target is not None and target.index == f"r2med-{DATASET}" and target.missing_judged == ()
    judged = {line.split("\t")[1] for line in (cut / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    assert target.judged == len(judged)


FUNCTION_SCORE = """
datasets = ["{cut}"]

[[arms]]
name = "plain"
template = '{{"size": {{{{size}}}}, "query": {{"match": {{"title_text": "{{{{query}}}}"}}}}}}'

[[arms]]
name = "boosted"
template_file = "fs.mustache"
params = {{ title_boost = {boost}, title_weight = {weight} }}
"""
FS_TEMPLATE = """{
  "size": {{size}},
  "query": {"function_score": {
    "query": {"multi_match": {"query": "{{query}}", "fields": ["title^{{title_boost}}", "text"]}},
    "functions": [{"filter": {"match": {"title": "{{query}}"}}, "weight": {{title_weight}}}],
    "boost_mode": "multiply"}}
}"""


def test_a_function_score_template_takes_its_params(es_url: str, cut: Path, tmp_path: Path) -> None:
    (tmp_path / "fs.mustache").write_text(FS_TEMPLATE)
    runs = []
    for boost, weight in ((1, 1), (8, 3)):
        exp = _experiment(
            tmp_path, FUNCTION_SCORE.format(cut=cut, boost=boost, weight=weight), f"e{boost}.toml"
        )
        assert _run(es_url, exp, tmp_path / f"out{boost}") == 0
        runs.append(_lines(tmp_path / f"out{boost}", DATASET, "boosted"))
    assert runs[0] != runs[1]  # the params reached the engine: other boosts, another ranking
    plain = _lines(tmp_path / "out1", DATASET, "plain")
    assert len(plain) >= 200 and len(runs[0]) >= 200 and plain != runs[0]


def _own_index(es: Backend, cut: Path, leave_out: set[str]) -> None:
    """An index the harness did not build: other field names, a custom analyzer, ids in ``doc_key``."""
    es.delete_index(OWN_INDEX, missing_ok=True)
    analysis = {"analyzer": {"folded": {"type": "custom", "tokenizer": "standard", "filter": ["lowercase"]}}}
    es.create_index(
        OWN_INDEX,
        settings={"number_of_shards": 1, "number_of_replicas": 0, "analysis": analysis},
        mappings={
            "properties": {
                "doc_key": {"type": "keyword"},
                "headline": {"type": "text", "analyzer": "folded"},
                "body": {"type": "text", "analyzer": "folded"},
            }
        },
    )
    lines = []
    for raw in (cut / "corpus.jsonl").read_text().splitlines():
        doc = json.loads(raw)
        if doc["_id"] not in leave_out:
            lines.append(json.dumps({"index": {"_index": OWN_INDEX, "_id": f"row-{doc['_id']}"}}))
            lines.append(json.dumps({"doc_key": doc["_id"], "headline": doc["title"], "body": doc["text"]}))
    assert not es.bulk(("\n".join(lines) + "\n").encode()).failed
    es.refresh(OWN_INDEX)


OWN = """
queries = "queries.tsv"
qrels = "{qrels}"
name = "mine"

[[arms]]
name = "own"
index = "{index}"
id_field = "doc_key"
template = '{{"size": {{{{size}}}}, "query": {{"multi_match": {{"query": "{{{{query}}}}", "fields": ["headline^2", "body"]}}}}}}'
"""


def _qrels_files(cut: Path, folder: Path) -> dict[str, Path]:
    rows = [line.split("\t") for line in (cut / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    (folder / "qrels.trec").write_text("".join(f"{q} 0 {d} {g.strip()}\n" for q, d, g in rows))
    (folder / "judgments.csv").write_text(
        "query_id,doc_id,grade\n" + "".join(f"{q},{d},{g.strip()}\n" for q, d, g in rows)
    )
    queries = [json.loads(line) for line in (cut / "queries.jsonl").read_text().splitlines()]
    qids = {q for q, _, _ in rows}
    (folder / "queries.tsv").write_text(
        "".join(f"{q['_id']}\t{q['text']}\n" for q in queries if q["_id"] in qids)
    )
    return {"trec": folder / "qrels.trec", "csv": folder / "judgments.csv"}


def test_your_own_index_with_your_queries_and_judgments_counts_what_it_lacks(
    es_url: str, es_backend: Backend, cut: Path, tmp_path: Path
) -> None:
    rows = [line.split("\t") for line in (cut / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    leave_out = {rows[0][1], rows[5][1], rows[9][1]}  # judged relevant documents the index will lack
    _own_index(es_backend, cut, leave_out)
    files = _qrels_files(cut, tmp_path)
    exp = _experiment(tmp_path, OWN.format(qrels=files["trec"].name, index=OWN_INDEX))
    assert _run(es_url, exp, tmp_path / "trec") == 0
    # the same experiment judged by the CSV file, given on the command line instead of the file's
    judged = ("--queries", str(tmp_path / "queries.tsv"), "--qrels", str(files["csv"]))
    assert _run(es_url, exp, tmp_path / "csv", *judged) == 0
    results = {kind: RunResults.load(tmp_path / kind) for kind in files}
    trec, csv = (results[k].datasets["mine"].arms["own"] for k in ("trec", "csv"))
    assert trec.target is not None and trec.target.index == OWN_INDEX and trec.target.id_field == "doc_key"
    assert trec.target.missing_judged == tuple(sorted(leave_out)) and trec.target.missing_relevant == 3
    assert trec.queries == 20 and trec.metrics == csv.metrics and trec.target == csv.target
    lines = _lines(tmp_path / "trec", "mine", "own")
    assert lines == _lines(tmp_path / "csv", "mine", "own")
    documents = {line.split()[2] for line in lines}
    assert not any(d.startswith("row-") for d in documents) and not documents & leave_out
    assert 0 < trec.metrics["ndcg@10"] < 1  # the missing relevant documents still count in the ideal ranking


BAD = """
datasets = ["{cut}"]

[[arms]]
name = "fine"
template_file = "builtin:lexical"

[[arms]]
name = "broken"
{arm}
"""


@pytest.mark.parametrize(
    ("arm", "error", "message"),
    [
        (
            """template = '{"query": {"match": {"title_text": {{query}}}}}'""",
            ConfigError,
            r"arm broken, query \d+: .*exp\.toml: arms\[1\]\.template: the rendered template is not valid JSON",
        ),
        (
            """template_file = "rejected.mustache\"""",
            RunError,
            r"arm broken \(template .*rejected\.mustache\): the search for query \d+ on .* failed \(HTTP 400\).*no_such_query",
        ),
        (
            """index = "no-such-index"\ntemplate = '{"query": {"match_all": {}}}'""",
            ConfigError,
            r"exp\.toml: arms\[1\]\.index: expected an index or alias 'no-such-index' on http",
        ),
    ],
)
def test_a_bad_arm_is_a_clear_error_and_leaves_no_run_directory(
    es_url: str, cut: Path, tmp_path: Path, arm: str, error: type[Exception], message: str
) -> None:
    (tmp_path / "rejected.mustache").write_text('{"query": {"no_such_query": {"title": "{{query}}"}}}')
    exp = _load(_experiment(tmp_path, BAD.format(cut=cut, arm=arm)), tmp_path / "out")
    with pytest.raises(error) as err:
        run(exp, ConnectionSettings(url=es_url))
    assert re.search(message, str(err.value)), err.value
    if "query" in message:  # the first query (in id order) that failed
        first = min(line.split("\t")[0] for line in (cut / "qrels" / "test.tsv").read_text().splitlines()[1:])
        assert f"query {first}" in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_malformed_judgments_line_is_named_and_nothing_is_written(
    es_url: str, cut: Path, tmp_path: Path
) -> None:
    _qrels_files(cut, tmp_path)
    (tmp_path / "qrels.trec").write_text((tmp_path / "qrels.trec").read_text() + "1 0 doc-x very\n")
    exp = _experiment(tmp_path, OWN.format(qrels="qrels.trec", index=OWN_INDEX))
    with pytest.raises(DataError) as err:
        run(_load(exp, tmp_path / "out"), ConnectionSettings(url=es_url))
    lines = len((tmp_path / "qrels.trec").read_text().splitlines())
    assert f"{tmp_path / 'qrels.trec'}:{lines}: error" in str(err.value)
    assert not (tmp_path / "out").exists()


STORED = """
datasets = ["{cut}"]

[[arms]]
name = "lexical"
stored_template = "exp-test-lexical"
params = {{ combined_field = "title_text" }}

[[arms]]
name = "inline"
template_file = "builtin:lexical"
"""


def test_a_stored_template_is_refused_where_the_engine_has_no_mustache(
    es_url: str, es_backend: Backend, cut: Path, tmp_path: Path
) -> None:
    assert not es_backend.probe().has("search_template")  # the stripped integ-test build
    exp = _load(_experiment(tmp_path, STORED.format(cut=cut)), tmp_path / "out")
    with pytest.raises(CapabilityMissing) as err:
        run(exp, ConnectionSettings(url=es_url))
    assert "exp.toml: arms[0].stored_template: " in str(err.value)
    assert "no lang-mustache module" in str(err.value) and "template_file" in str(err.value)
    assert not (tmp_path / "out").exists()


def test_on_opensearch_a_stored_template_an_inline_one_and_the_builtin_arm_agree(
    os_backend: Backend, cut: Path, tmp_path: Path
) -> None:
    """OpenSearch has lang-mustache: the engine renders the stored template (_msearch/template), the
    harness renders the same text; both give the built-in lexical arm's run, line for line."""
    url = os_backend.url
    os_backend.put_stored_template("exp-test-lexical", builtin_path("lexical", "opensearch").read_text())
    exp = _experiment(tmp_path, STORED.format(cut=cut))
    assert _run(url, exp, tmp_path / "out") == 0
    builtin = tmp_path / "builtin"
    args = ["run", "lexical", "--dataset", str(cut), "--output", str(builtin), "--url", url]
    assert main([*args, "--records", "jsonl", "--no-progress"]) == 0
    lines = _lines(builtin, DATASET, "lexical")
    assert len(lines) >= 200
    assert (
        _lines(tmp_path / "out", DATASET, "lexical") == lines == _lines(tmp_path / "out", DATASET, "inline")
    )


def test_an_unknown_variable_stops_the_cli_before_anything_is_written(
    es_url: str, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = BAD.format(cut=cut, arm="""template = '{"query": {"match": {"title_text": "{{qeury}}"}}}'""")
    assert _run(es_url, _experiment(tmp_path, text), tmp_path / "out") == 2
    assert "exp.toml: arms[1].template: unknown template variable(s) qeury" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


TWO_CLUSTERS = """
datasets = ["{cut}"]

[[arms]]
name = "es"
template_file = "builtin:lexical"

[[arms]]
name = "os"
template_file = "builtin:lexical"
connection = {{ url = "{os_url}" }}

[[fused]]
name = "both"
inputs = ["es", "os"]
"""


def test_one_experiment_compares_two_clusters(
    es_url: str, os_backend: Backend, cut: Path, tmp_path: Path
) -> None:
    exp = _experiment(tmp_path, TWO_CLUSTERS.format(cut=cut, os_url=os_backend.url))
    assert _run(es_url, exp, tmp_path / "out") == 0
    results = RunResults.load(tmp_path / "out")
    arms = results.datasets[DATASET].arms
    assert arms["es"].target is not None and arms["os"].target is not None
    assert (arms["es"].target.url, arms["os"].target.url) == (es_url, os_backend.url)
    assert arms["both"].target is not None and arms["both"].target.inputs == ("es", "os")
    es_lines, os_lines = _lines(tmp_path / "out", DATASET, "es"), _lines(tmp_path / "out", DATASET, "os")
    assert len(es_lines) >= 200 and len(os_lines) >= 200
    assert os_backend.alias_targets(arms["os"].target.index)  # built there by the experiment
    assert es_lines != os_lines  # another engine (and its analysis chain): not the same run copied twice
    schema = json.loads((REPO / "harness" / "resources" / "schema" / "results-v2.schema.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "out" / "results.json").read_text()), schema)


SWEPT = (
    LEXICAL_VECTOR_HYBRID
    + """
[sweep]
tune_on = "{tune_on}"
grid = "method=rrf,wsum;norm=min-max,zmuv;weights=0.1..0.9/0.2"
"""
)


def test_a_sweep_reports_the_held_out_score_of_the_fused_arm(es_url: str, cut: Path, tmp_path: Path) -> None:
    exp = _experiment(tmp_path, SWEPT.format(cut=cut, tune_on="kfold:4"))
    assert _run(es_url, exp, tmp_path / "out") == 0
    results = RunResults.load(tmp_path / "out")
    ds = results.datasets[DATASET]
    sweep = ds.sweep
    assert sweep is not None and sweep.arm == "hybrid"
    assert sweep.held_out == ds.arms["hybrid"].metrics["ndcg@10"]  # the arm's score is the held-out one
    assert len(sweep.choices.folds) == 4 and sum(f.held_out_queries for f in sweep.choices.folds) == 20
    assert sweep.choices.configurations == 11  # rrf + wsum x 2 norms x 5 weights
    assert results.manifest.tuning[DATASET] == sweep.choices
    target = ds.arms["hybrid"].target
    assert target is not None and target.fusion is not None and "held out (kfold:4)" in target.fusion


def test_a_sweep_that_the_data_cannot_run_fails_before_any_search(
    es_url: str, cut: Path, tmp_path: Path
) -> None:
    exp = _load(_experiment(tmp_path, SWEPT.format(cut=cut, tune_on="kfold:50")), tmp_path / "out")
    with pytest.raises(ConfigError, match="expected kfold:K with 2 <= K <= 20"):
        run(exp, ConnectionSettings(url=es_url))
    assert not (tmp_path / "out").exists()


def test_a_sweep_on_a_train_split_chooses_there_and_scores_on_test(
    es_url: str, es_inspect: Any, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    data = scifact_subset(
        tmp_path_factory.mktemp("exp-train") / "exp-train", n_docs=120, n_test=12, n_train=12
    )
    exp = _experiment(tmp_path, SWEPT.format(cut=data, tune_on="train"))
    assert _run(es_url, exp, tmp_path / "out") == 0
    ds = RunResults.load(tmp_path / "out").datasets["exp-train"]
    assert ds.sweep is not None and ds.arms["hybrid"].queries == 12
    (fold,) = ds.sweep.choices.folds  # one choice, made on the 12 train queries, scored on the 12 test ones
    assert (fold.choose_queries, fold.held_out_queries) == (12, 12)
    assert ds.sweep.held_out == ds.arms["hybrid"].metrics["ndcg@10"]
    # the train split's runs are checkpointed too: run again, no arm searches either split (each would
    # send 12 searches; only the index check is left)
    assert {p.parent.name for p in (tmp_path / "out" / "arms" / "exp-train").glob("*/*.json")} == {
        "test",
        "tune-train",
    }
    before = es_inspect.indices.stats(index="r2med-exp-train", metric="search")["_all"]["total"]["search"]
    assert _run(es_url, exp, tmp_path / "out") == 0
    after = es_inspect.indices.stats(index="r2med-exp-train", metric="search")["_all"]["total"]["search"]
    assert after["query_total"] - before["query_total"] < 12
    again = RunResults.load(tmp_path / "out").datasets["exp-train"]
    assert replace(again, timings={}) == replace(ds, timings={})  # (how long the index check took differs)
