"""Bad input: user mistakes through ``harness.cli.main``, each a clear message and a non-zero exit,
with nothing half-published (every ``r2med-badin-*`` alias points where it pointed before).

Data mistakes are cut from the real SciFact (60 documents), then broken one way each. The wrong
password lives in ``test_secrets_in_outputs`` (it needs the secured node that module starts).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from indexer import Backend, VectorSpec
from tests._support import drop_indices, scifact_subset
from tests.reliability._faults import one_summary
from tests.reliability._nodes import free_port

PREFIX = "badin-"


@dataclass(frozen=True)
class Ctx:
    root: Path
    url: str
    good: Path  # a valid dataset, indexed (BM25) and published
    run_good: Path  # a finished lexical run over ``good``
    run_other: Path  # a finished lexical run over another dataset
    dims: Path  # indexed; its index has a 768-dimensional field named like MiniLM's (384)
    tampered: Path  # indexed; its index records another corpus fingerprint

    def broken(self, name: str, edit: Callable[[Path], None]) -> Path:
        """A fresh copy of ``good`` under another name, broken by ``edit``."""
        folder = self.root / f"{PREFIX}{name}"
        if not folder.exists():
            shutil.copytree(self.good, folder)
            edit(folder)
        return folder


def _aliases(backend: Backend) -> dict[str, list[str]]:
    """alias -> the indices behind it (indices without an alias are not published)."""
    out: dict[str, list[str]] = {}
    for stats in backend.list_indices(f"r2med-{PREFIX}*"):
        for alias in stats.aliases:
            out.setdefault(alias, []).append(stats.name)
    return {alias: sorted(indices) for alias, indices in out.items()}


def _index(folder: Path, url: str, *extra: str) -> list[str]:
    return ["index", "--dataset", str(folder), "--no-vectors", "--url", url, "--quiet", *extra]


def _run(folder: Path, url: str, *extra: str) -> list[str]:
    return ["run", "lexical", "--dataset", str(folder), "--url", url, "--no-progress", "--records", "jsonl", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def ctx(es_backend: Backend, es_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ctx]:
    root = tmp_path_factory.mktemp("bad-input")
    drop_indices(es_backend, f"r2med-{PREFIX}*")
    good = scifact_subset(root / f"{PREFIX}good", n_docs=60, n_test=5, n_train=5)
    other = scifact_subset(root / f"{PREFIX}other", n_docs=60, n_test=8, n_train=5)
    dims = scifact_subset(root / f"{PREFIX}dims", n_docs=40, n_test=3, n_train=3)
    tampered = scifact_subset(root / f"{PREFIX}tampered", n_docs=50, n_test=3, n_train=3)
    for folder in (good, dims, tampered):
        assert harness_main(_index(folder, es_url)) == 0
    run_good, run_other = root / "run-good", root / "run-other"
    assert harness_main(_run(good, es_url, "--output", str(run_good))) == 0
    assert harness_main(_run(other, es_url, "--output", str(run_other))) == 0
    # an existing vector field under MiniLM's field name, but 768-dimensional (another model's vectors)
    (dims_index,) = es_backend.alias_targets(f"r2med-{PREFIX}dims")
    other = es_backend.vector_mapping(VectorSpec(dims=768, similarity="cosine"))
    es_backend.put_mapping(dims_index, properties={"vec_all_minilm_l6_v2": other})
    # an index whose recorded fingerprint is not the data's
    (fp_index,) = es_backend.alias_targets(f"r2med-{PREFIX}tampered")
    meta = es_backend.get_mapping(fp_index).meta
    meta["fingerprint"]["corpus"] = "0" * 64
    es_backend.put_mapping(fp_index, meta=meta)
    yield Ctx(root, es_url, good, run_good, run_other, dims, tampered)
    drop_indices(es_backend, f"r2med-{PREFIX}*")


# ------------------------------------------------------------------------------------- data edits
def _append(line: bytes) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        with (folder / "corpus.jsonl").open("ab") as fh:
            fh.write(line)

    return edit


def _empty_first_query(folder: Path) -> None:
    lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = "   "
    lines[0] = json.dumps(first)
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _duplicate_first_doc(folder: Path) -> None:
    first = (folder / "corpus.jsonl").read_bytes().split(b"\n", 1)[0]
    _append(first + b"\n")(folder)


def _ten_mb_document(folder: Path) -> None:
    words = " ".join(f"word{i % 5000}" for i in range(1_200_000))[: 10 * 2**20]
    doc = {"_id": "huge", "title": "a 10 MB document", "text": words}
    _append(json.dumps(doc).encode() + b"\n")(folder)


def _judge_unknown_query(folder: Path) -> None:
    with (folder / "qrels" / "test.tsv").open("a") as fh:
        fh.write("no-such-query\t4983\t1\n")


def _no_qrels(folder: Path) -> None:
    shutil.rmtree(folder / "qrels")


def _empty_folder(folder: Path) -> None:
    shutil.rmtree(folder)
    folder.mkdir()


# ------------------------------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    id: str
    argv: Callable[[Ctx], list[str]]
    expect: tuple[str, ...]  # phrases the error output must hold


CASES = [
    # data
    Case(
        "malformed-json-line",
        lambda c: _index(c.broken("malformed", _append(b'{"_id": "x1", "text": "unterminated\n')), c.url),
        ("corpus.jsonl:61", "expected one JSON object per line, found malformed JSON"),
    ),
    Case(
        "undecodable-bytes",
        lambda c: _index(
            c.broken("latin1", _append(b'{"_id": "x2", "title": "", "text": "caf\xe9 au lait"}\n')), c.url
        ),
        ("corpus.jsonl:61", "expected UTF-8 text, found byte 0xe9"),
    ),
    Case(
        "ten-mb-document",
        lambda c: _index(c.broken("huge", _ten_mb_document), c.url),
        ("document 'huge' is 10.0 MiB", "expected at most 4.0 MiB"),
    ),
    Case(
        "empty-query",
        lambda c: _run(c.broken("emptyq", _empty_first_query), c.url),
        ("expected a non-empty query text",),
    ),
    Case(
        "duplicate-document-id",
        lambda c: _index(c.broken("dupid", _duplicate_first_doc), c.url),
        ("expected unique document ids",),
    ),
    Case(
        "qrels-judge-an-unknown-query",
        lambda c: _index(c.broken("unknownq", _judge_unknown_query), c.url),
        ('query "no-such-query"',),
    ),
    Case(
        "missing-qrels",
        lambda c: _index(c.broken("noqrels", _no_qrels), c.url),
        ('expected qrels/test.tsv for split "test"',),
    ),
    Case(
        "not-a-dataset-folder",
        lambda c: _index(c.broken("empty", _empty_folder), c.url),
        ("is not a dataset folder", "an empty folder"),
    ),
    Case(
        "unknown-dataset-name",
        lambda c: _run(Path("scifactt"), c.url),
        ('expected a dataset ("sample"', '"scifactt"'),
    ),
    Case(
        "same-dataset-twice",
        lambda c: _run(c.good, c.url, "--dataset", str(c.good)),
        ("the same dataset was given twice",),
    ),
    # indexes and models
    Case(
        "vector-dims-differ-from-existing-field",
        lambda c: ["index", "--dataset", str(c.dims), "--embed-model", "minilm", "--url", c.url, "--quiet"],
        ("holds 768-dimensional vectors", "produces 384"),
    ),
    Case(
        "unknown-model",
        lambda c: ["index", "--dataset", str(c.good), "--embed-model", "no-such-model", "--url", c.url],
        ("embedding model 'no-such-model' at revision main is not in the local Hugging Face cache", "--embed-model /path"),
    ),
    Case(
        "index-fingerprint-differs-from-data",
        lambda c: _index(c.tampered, c.url),
        ("records corpus fingerprint 000000", "refusing to mix corpora"),
    ),
    Case(
        "no-vectors-with-a-model",
        lambda c: _index(c.good, c.url, "--embed-model", "minilm"),
        ("--embed-model minilm: names a model to embed with: expected no --no-vectors with it",),
    ),
    Case("chunk-size-zero", lambda c: _index(c.good, c.url, "--chunk-mb", "0"), ("--chunk-mb 0: expected 0.1..100, found 0.0",)),
    Case(
        "unknown-analysis-chain",
        lambda c: _index(c.good, c.url, "--analysis", "klingon"),
        ("--analysis klingon: expected one of english, hunspell, standard, found 'klingon'",),
    ),
    Case(
        "knn-engine-on-elasticsearch",
        lambda c: ["index", "--dataset", str(c.good), "--knn-engine", "faiss", "--url", c.url, "--no-progress"],
        ("Elasticsearch has no k-NN engine choice", "'faiss'"),
    ),
    Case(
        "unknown-knn-engine",
        lambda c: ["index", "--dataset", str(c.good), "--knn-engine", "annoy", "--url", c.url],
        ("--knn-engine annoy: expected one of lucene, faiss, nmslib, found 'annoy'",),
    ),
    # run flags
    Case("depth-too-small", lambda c: _run(c.good, c.url, "--depth", "5"), ("--depth 5: expected 10..1000, found 5",)),
    Case(
        "depth-too-large",
        lambda c: _run(c.good, c.url, "--depth", "5000"),
        ("--depth 5000: expected 10..1000, found 5000",),
    ),
    Case(
        "batch-size-zero",
        lambda c: _run(c.good, c.url, "--batch-size", "0"),
        ("--batch-size 0: expected 1..1000, found 0",),
    ),
    Case(
        "num-candidates-below-depth",
        lambda c: _run(c.good, c.url, "--num-candidates", "5"),
        ("--num-candidates 5: expected between depth (100) and 10000, found 5",),
    ),
    Case("timeout-zero", lambda c: _run(c.good, c.url, "--timeout", "0"), ("--timeout 0: expected more than 0 and at most 3600, found 0.0",)),
    Case("unknown-mode", lambda c: ["run", "fuzzy", "--dataset", str(c.good)], ("MODE fuzzy: expected one of lexical, vector, hybrid, found 'fuzzy'",)),
    Case(
        "unknown-fusion",
        lambda c: ["run", "hybrid", "--dataset", str(c.good), "--fusion", "magic", "--url", c.url],
        ("magic",),
    ),
    Case(
        "tune-on-without-hybrid",
        lambda c: _run(c.good, c.url, "--tune-on", "train"),
        ("--tune-on train: tunes fusion weights, so it needs the hybrid mode",),
    ),
    Case(
        "expansion-absent",
        lambda c: _run(c.good, c.url, "--expansion", "hyde"),
        ("has no hyde expansions", "present: none"),
    ),
    Case("unknown-record-sink", lambda c: _run(c.good, c.url, "--records", "csv"), ("record sinks among jsonl, es",)),
    # connections
    Case(
        "unreachable-url",
        lambda c: _index(c.good, f"http://127.0.0.1:{free_port()}"),
        ("cannot reach a search engine at http://127.0.0.1:",),
    ),
    Case(
        "missing-ca-file",
        lambda c: _index(c.good, c.url.replace("http://", "https://"), "--ca-cert", str(c.root / "no" / "ca.crt")),
        ("CA certificate file not found",),
    ),
    Case(
        "credentials-in-url",
        lambda c: _index(c.good, "http://elastic:hunter2@127.0.0.1:9200"),
        ("credentials inside the URL are not accepted",),
    ),
    Case(
        "password-without-user",
        lambda c: _index(c.good, c.url, "--password", "hunter2"),
        ("a password was given without a username",),
    ),
    # reading runs
    Case(
        "compare-runs-of-other-datasets",
        lambda c: ["compare", str(c.run_good), str(c.run_other)],
        ("the runs share no dataset",),
    ),
    Case(
        "compare-a-folder-that-is-no-run",
        lambda c: ["compare", str(c.run_good), str(c.good)],
        ("is not a finished run directory",),
    ),
]  # fmt: skip


def test_at_least_twenty_distinct_mistakes() -> None:
    assert len(CASES) >= 20 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_mistake_is_clear_nonzero_and_publishes_nothing(
    case: Case, ctx: Ctx, es_backend: Backend, capfd: pytest.CaptureFixture[str]
) -> None:
    before = _aliases(es_backend)
    code = harness_main(case.argv(ctx))
    out = capfd.readouterr()
    message = " ".join(out.err.split())  # undo wrapping
    assert code != 0, f"exit 0 for a mistake; stdout:\n{out.out}"
    for phrase in case.expect:
        assert phrase in message, f"{phrase!r} not in the error output:\n{out.err}"
    assert "Traceback" not in out.err
    assert _aliases(es_backend) == before, "an alias moved: something was (half-)published"
    with capfd.disabled():
        first = next((line for line in out.err.splitlines() if line.strip()), "")
        print(f"\n  bad input {case.id}: exit {code}: {first.strip()[:150]}", end="")


def test_good_dataset_still_indexes_after_all_that(ctx: Ctx, capfd: pytest.CaptureFixture[str]) -> None:
    # the fixtures are sound: the same command on the unbroken data succeeds (and changes nothing)
    assert harness_main(_index(ctx.good, ctx.url)) == 0
    assert one_summary(capfd.readouterr().out).work == "unchanged"
