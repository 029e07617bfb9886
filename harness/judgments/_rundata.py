"""A finished run directory, read back for judging: its results, its data, its judgments, its rankings.

The run's dataset is loaded again from where the manifest says it came from (``sample``,
``r2med/<Name>``, or the folder the run read), or from a path the user gives; its
fingerprint must equal the run's, so pools and re-scores never mix data. A re-scored run
keeps the judgments it was scored with in ``qrels/<dataset>.qrels``: those are its
judgments, and the fingerprint check covers them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError, slug
from harness._errors import RunError
from harness.results import Ranking, RunResults, load_ranking, trec_path
from indexer import Dataset, load_dataset, read_judgments

QRELS_FOLDER = "qrels"
NAMED_PREFIXES = ("sample", "r2med/")


def qrels_path(run_dir: Path, dataset: str) -> Path:
    """Where a re-scored run directory keeps the judgments of ``dataset`` (TREC qrels)."""
    return Path(run_dir) / QRELS_FOLDER / f"{slug(dataset)}.qrels"


def qrels_text(qrels: dict[str, dict[str, int]]) -> str:
    return "".join(
        f"{qid} 0 {doc} {grade}\n" for qid in sorted(qrels) for doc, grade in sorted(qrels[qid].items())
    )


@dataclass(frozen=True, slots=True)
class RunData:
    """A run directory and its typed results."""

    run_dir: Path
    results: RunResults

    @classmethod
    def load(cls, run_dir: Path) -> RunData:
        return cls(Path(run_dir), RunResults.load(run_dir))

    def datasets(self, chosen: Sequence[str] = ()) -> list[str]:
        """``chosen`` (checked against the run), or every dataset of the run."""
        names = list(self.results.datasets)
        unknown = [d for d in chosen if d not in names]
        if unknown:
            raise ConfigError(
                f"expected datasets of the run ({', '.join(names)}), found {', '.join(unknown)}"
            )
        return list(chosen) or names

    def arms(self, dataset: str, chosen: Sequence[str] = ()) -> list[str]:
        names = list(self.results.datasets[dataset].arms)
        unknown = [a for a in chosen if a not in names]
        if unknown:
            raise ConfigError(f"expected arms of {dataset} ({', '.join(names)}), found {', '.join(unknown)}")
        return list(chosen) or names

    def ranking(self, dataset: str, arm: str) -> Ranking:
        return load_ranking(trec_path(self.run_dir, dataset, arm))

    def dataset(self, name: str, data_path: Path | None = None) -> Dataset:
        """The run's dataset with the judgments the run was scored with; fingerprint checked."""
        info = self.results.manifest.datasets.get(name)
        split, revision = (info.split, info.revision) if info else (None, None)
        spec = str(data_path) if data_path is not None else _spec(name, info.source if info else "")
        try:
            ds = load_dataset(spec, split=split, revision=revision if data_path is None else None)
        except ConfigError as exc:
            raise ConfigError(
                f"cannot load dataset {name} of {self.run_dir} again (from {spec}); pass the folder "
                "that holds it (--data PATH)"
            ) from exc
        stored = qrels_path(self.run_dir, name)
        if stored.is_file():
            ds = ds.with_qrels(read_judgments(stored, "trec").qrels(ds.queries).qrels)
        expected = self.results.datasets[name].fingerprint
        if ds.fingerprint.combined != expected:
            raise RunError(
                f"dataset {name} loaded from {spec} has fingerprint {ds.fingerprint.short}, but {self.run_dir} "
                f"was scored on {expected[:12]}: the data or its judgments changed since the run, so its "
                "rankings cannot be judged or re-scored against it"
            )
        return ds


def _spec(name: str, source: str) -> str:
    if name == "sample" or name.lower().startswith("r2med/"):
        return name
    if source and Path(source).is_dir():
        return source
    raise ConfigError(
        f"dataset {name} came from {source or 'an unknown place'}, which is not a folder on this machine; "
        "pass the folder that holds it (--data PATH)"
    )
