"""The one checkpoint store: atomic JSON records under the run directory, read back only by the configuration
that wrote them; a run directory of another configuration is refused before anything is written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from base import ConfigError
from harness.run import ArmRun, Checkpoints, write_manifest
from tests.harness.inspect.synthetic import make_dataset, synthetic_results

RUN = ArmRun(
    run={"q1": {"d1": 2.0, "d2": 1.0}}, took_ms={"q1": 3.0}, client_ms={"q1": 9.0}, wall_s=0.5, retries=1
)


def test_a_record_is_read_back_by_its_configuration_only(tmp_path: Path) -> None:
    mine = Checkpoints(tmp_path, "aaaa")
    mine.arms("sample", None).save("lexical", RUN, target={"index": "i"})
    path = tmp_path / "arms" / "sample" / "default" / "lexical.json"
    record = json.loads(path.read_text())
    assert (
        record["config_hash"] == "aaaa" and record["target"] == {"index": "i"} and record["name"] == "lexical"
    )
    again = Checkpoints(tmp_path, "aaaa")
    assert again.arms("sample", None).run("lexical") == RUN and again.reused == 1
    other = Checkpoints(tmp_path, "bbbb")
    assert other.arms("sample", None).run("lexical") is None and other.reused == 0
    assert not list(tmp_path.rglob("*.tmp*"))  # written atomically: no temporary file left


def test_names_that_are_not_plain_get_a_digest_and_never_collide(tmp_path: Path) -> None:
    names = ["vector>rerank", "vector-rerank", "knn{num_candidates=100}", "Knn{num_candidates=100}"]
    store = Checkpoints(tmp_path, "h")
    for i, name in enumerate(names):
        store.folder("sweep", "s", "test").save(name, ArmRun(run={"q": {"d": float(i)}}))
    files = [p.name for p in (tmp_path / "sweep" / "s" / "test").iterdir()]
    assert len(files) == len(names) and all(f.endswith(".json") and f.isascii() for f in files)
    assert "vector-rerank.json" in files  # a plain name is its own file name; the others get a digest
    assert not any(set(f) & set(">{}=") for f in files)
    read = [Checkpoints(tmp_path, "h").folder("sweep", "s", "test").run(n) for n in names]
    assert [r.run["q"]["d"] for r in read if r is not None] == [0.0, 1.0, 2.0, 3.0]


def test_a_run_directory_of_another_configuration_is_refused(tmp_path: Path) -> None:
    assert Checkpoints(tmp_path / "new", "h1").claim() is False  # nothing there yet
    manifest = synthetic_results({"d": make_dataset("d", 1)}).manifest
    write_manifest(tmp_path, replace(manifest, config_hash="h1", status="running"))
    assert Checkpoints(tmp_path, "h1").claim() is True  # the same configuration resumes
    with pytest.raises(
        ConfigError, match=r"holds a run of another configuration \(config hash h1, this one h2\)"
    ):
        Checkpoints(tmp_path, "h2").claim()


def test_an_older_experiments_marker_still_guards_its_directory(tmp_path: Path) -> None:
    (tmp_path / "arms").mkdir()
    (tmp_path / "arms" / "config.json").write_text(json.dumps({"config_hash": "old"}))
    with pytest.raises(ConfigError, match="config hash old, this one new"):
        Checkpoints(tmp_path, "new").claim()
