"""The agreement table (overlap@k, RBO) in the terminal tables, report.md and the HTML report, and
``harness compare``'s agreement between the same arms of two run directories (read from TREC files)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from base import ConfigError
from harness._compare import overlap_runs
from harness.cli import main
from harness.eval import compare_overlap, rankings
from harness.inspect import dataset_tables, overlap_table, print_table, render_html, render_markdown
from harness.results import RunResults
from tests.harness.inspect.synthetic import DATASETS, N_QUERIES, make_run_dir


def _with_overlap(run_dir: Path, inputs: dict) -> RunResults:  # type: ignore[type-arg]
    """The synthetic run with the overlap of its tested pairs, computed from its runs, saved back."""
    results = RunResults.load(run_dir)
    datasets = {}
    for name, ds in results.datasets.items():
        pairs = [(c.arm_a, c.arm_b) for c in ds.significance]
        ranked = {name: {arm: rankings(run) for arm, run in inputs[name].runs.items()}}
        datasets[name] = replace(ds, overlap=tuple(s for s, _ in compare_overlap(ranked, pairs)))
    results = replace(results, datasets=datasets)
    results.save(run_dir)
    return results


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResults]:
    run_dir, inputs = make_run_dir(tmp_path_factory.mktemp("overlap") / "run", with_records=False)
    return run_dir, _with_overlap(run_dir, inputs)


def test_the_table_is_in_every_report(run: tuple[Path, RunResults]) -> None:
    run_dir, results = run
    ds = results.datasets["Biology"]
    assert [(o.arm_a, o.arm_b) for o in ds.overlap] == [("lexical", "hybrid"), ("lexical", "vector")]
    assert all(o.queries == N_QUERIES and 0.0 <= o.overlap < 1.0 and 0.0 <= o.rbo < 1.0 for o in ds.overlap)
    assert RunResults.load(run_dir) == results  # the codec round-trips it
    table = overlap_table("Biology", ds.overlap)
    assert [c.header for c in table.columns] == [
        "pair (B vs A)", "queries", "overlap@10", "RBO (p=0.9)", "top-10 changed",
    ]  # fmt: skip
    first = ds.overlap[0]
    assert [c.text for c in table.rows[0][:4]] == [
        "hybrid vs lexical", str(N_QUERIES), f"{first.overlap:.4f}", f"{first.rbo:.4f}",
    ]  # fmt: skip
    assert any("RBO_ext" in note for note in table.notes)
    assert table in dataset_tables("Biology", ds)
    text = render_markdown(results)
    assert text.count(": agreement between arms") == len(DATASETS)
    assert f"| hybrid vs lexical | {N_QUERIES} | {first.overlap:.4f} | {first.rbo:.4f} |" in text
    html = render_html(run_dir)
    assert 'id="overlap-biology"' in html and "Agreement between arms" in html
    console = Console(record=True, width=200)
    print_table(table, console)
    assert "hybrid vs lexical" in console.export_text()


def test_an_older_results_file_without_overlap_still_loads(run: tuple[Path, RunResults]) -> None:
    data = run[1].to_json()
    for ds in data["datasets"].values():
        del ds["overlap"]
    loaded = RunResults.from_json(data)
    assert all(ds.overlap == () for ds in loaded.datasets.values())
    assert all(
        t.key.startswith(("table-", "sig-")) for t in dataset_tables("Biology", loaded.datasets["Biology"])
    )


def _copy(run_dir: Path, out: Path, run_id: str) -> Path:
    shutil.copytree(run_dir, out)
    results = RunResults.load(out)
    replace(results, manifest=replace(results.manifest, run_id=run_id)).save(out)
    return out


def test_compare_reads_the_trec_files_of_two_runs(
    run: tuple[Path, RunResults], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prod = _copy(run[0], tmp_path / "prod", "prod")
    cand = _copy(run[0], tmp_path / "cand", "cand")
    # the candidate swaps the first two documents of one query of the vector arm on Biology
    trec = cand / "runs" / "biology" / "vector.trec"
    lines = trec.read_text().splitlines()

    first, second = lines[0].split(), lines[1].split()
    first[2], second[2] = second[2], first[2]
    trec.write_text("\n".join([" ".join(first), " ".join(second), *lines[2:]]) + "\n")
    found = {(o.dataset, o.arm_b): o for o in overlap_runs([prod, cand])}
    assert set(found) == {(d, f"cand:{a}") for d in DATASETS for a in ("lexical", "vector", "hybrid")}
    for (dataset, arm), o in found.items():
        assert o.arm_a == arm.replace("cand:", "prod:") and o.queries == N_QUERIES and o.overlap == 1.0
        # swapping the top two of one query costs that query exactly 1 - p = 0.1 of RBO_ext:
        # X_1 drops from 1 to 0, every other prefix overlap is unchanged: (1-p)/p * (1/1) * p^1 = 0.1
        moved = (dataset, arm) == ("Biology", "cand:vector")
        expected = (N_QUERIES - 0.1) / N_QUERIES if moved else 1.0
        assert o.rbo == pytest.approx(expected, abs=1e-6) and o.changed == 0
    assert main(["compare", str(prod), str(cand), "--overlap-k", "5"]) == 0
    out = capsys.readouterr().out
    assert "overlap@5" in out and "cand:vector vs prod:vector" in out
    row = next(line for line in out.splitlines() if "Biology" in line and "cand:vector vs prod:vector" in line
               and "1.0000" in line)  # fmt: skip
    assert f"{(N_QUERIES - 0.1) / N_QUERIES:.4f}" in row


def test_two_runs_with_the_same_run_id_are_refused(run: tuple[Path, RunResults], tmp_path: Path) -> None:
    shutil.copytree(run[0], tmp_path / "a" / "run")
    shutil.copytree(run[0], tmp_path / "b" / "run")
    with pytest.raises(ConfigError, match="have the same run id"):
        overlap_runs([tmp_path / "a" / "run", tmp_path / "b" / "run"])
