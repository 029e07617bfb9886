"""``sample``: SciFact shipped inside the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from indexer.data import load_dataset
from tests._support import SCIFACT


def test_sample_is_scifact_test_split() -> None:
    ds = load_dataset("sample")
    assert (ds.name, ds.split) == ("sample", "test")
    assert (ds.corpus_size, len(ds.queries), ds.judgments) == (5183, 300, 339)
    assert ds.warnings == ()


def test_sample_is_identical_to_the_shared_scifact() -> None:
    assert load_dataset("sample").fingerprint == load_dataset(str(SCIFACT)).fingerprint
    assert (
        load_dataset("sample", split="train").fingerprint
        == load_dataset(str(SCIFACT), split="train").fingerprint
    )


def test_sample_train_split_for_tuning() -> None:
    train = load_dataset("sample").with_split("train")
    assert (len(train.queries), train.judgments) == (809, 919)


def test_bundled_files_are_compressed_small_and_attributed() -> None:
    folder = Path(str(files("indexer.data").joinpath("resources", "scifact")))  # what the package ships
    files_ = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    sizes = {p.name: p.stat().st_size for p in files_ if p.parent.name != "vectors"}
    assert sum(sizes.values()) <= 4 * 1024 * 1024
    assert all(name.endswith(".gz") for name in sizes if name != "SOURCE.md")
    # the shipped document vectors (float32, issue 28): 5,183 x 384 floats compressed, and their manifest
    vectors = {p.name: p.stat().st_size for p in files_ if p.parent.name == "vectors"}
    assert set(vectors) == {"all-minilm-l6-v2.npy.gz", "all-minilm-l6-v2.json"}
    assert vectors["all-minilm-l6-v2.npy.gz"] <= 5183 * 384 * 4
    source = (folder / "SOURCE.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in source and "ODC-By 1.0" in source and "Wadden et al." in source
