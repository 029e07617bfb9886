"""``harness rescore``: score a finished run again with more (or other) judgments, without re-querying.

Every arm is scored from the run's own TREC files (``runs/<dataset>/<arm>.trec``) against the
dataset's judgments merged with the file's (``merge``: the file's grade wins where both judge a
pair; ``fill``: the run's grade does, the file only adds pairs), or against the file's alone
(``replace``). A file with an LLM judge's provenance beside it (``harness judge``) carries it into
the re-scored dataset's ``judgments`` (its label, the judge's id and measured agreement), which
every table of the run and ``harness gate`` show. The result is a new run directory, never the
original: by default ``RUN_DIR/rescored/<judgments file>-<sha8>/``, holding ``results.json``
(its manifest's ``rescore`` says from what), ``per_query.jsonl``, ``report.md``, the TREC files,
``overlap.jsonl`` (agreement between arms needs no judgments)
and the judgments it was scored with (``qrels/<dataset>.qrels``), so that it can be gated,
compared, pooled and re-scored in turn. Latency figures are the original run's (nothing was
searched again). Its dataset fingerprint covers the new judgments: it can only be gated
against a baseline scored with the same judgments.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from base import ConfigError, slug, write_jsonl_atomic, write_text_atomic
from harness.eval import (
    DEFAULT_MEASURES,
    PRIMARY_MEASURE,
    Comparison,
    Evaluation,
    compare_arms,
    evaluate,
    holm,
)
from harness.inspect import render_markdown
from harness.judgments._apply import DEFAULT_MODE, judgments_used, merge_judgments
from harness.judgments._rundata import QRELS_FOLDER, RunData, qrels_path, qrels_text
from harness.results import (
    OVERLAP_FILE,
    PER_QUERY_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    RUNS_FOLDER,
    DatasetResult,
    JudgeProvenance,
    JudgmentsApplied,
    JudgmentsUsed,
    Manifest,
    QueryScores,
    RescoreInfo,
    RunResults,
    load_per_query,
    load_provenance,
    rank_run,
    scores_and_intervals,
)
from indexer import Dataset, Judgments, read_judgments

RESCORED_FOLDER = "rescored"


@dataclass(frozen=True, slots=True)
class RescoreRequest:
    run_dir: Path
    qrels: Path
    format: str | None = None
    dataset: str | None = None
    mode: str = DEFAULT_MODE
    out: Path | None = None
    data_path: Path | None = None


def default_out(run_dir: Path, judgments: Judgments) -> Path:
    return Path(run_dir) / RESCORED_FOLDER / f"{slug(Path(judgments.path).stem)}-{judgments.sha256[:8]}"


def _check_out(out: Path, run_dir: Path, judgments: Judgments) -> None:
    """The target is new, or an earlier re-score of the same run with the same judgments file."""
    if out.resolve() == Path(run_dir).resolve():
        raise ConfigError(
            f"--output {out} is the run directory itself: expected a new directory, the original stays"
        )
    if not (out / RESULTS_FILE).is_file():
        return
    earlier = RunResults.load(out).manifest.rescore
    same = (
        earlier is not None
        and earlier.source_dir == str(Path(run_dir).resolve())
        and all(j.sha256 == judgments.sha256 for j in earlier.judgments)
    )
    if not same:
        raise ConfigError(
            f"{out} already holds another run's results: expected a new directory (or the same re-score again); "
            "choose another --output"
        )


def _config(manifest: Manifest, key: str, default: Any) -> Any:
    """A ``stats.*`` key of the run's identity (``stats.seed``; runs made before 0.3 named it ``seed``)."""
    config = manifest.config
    return config.get(key, config.get(key.removeprefix("stats."), default))


def _measures(manifest: Manifest) -> tuple[str, ...]:
    configured = _config(manifest, "stats.measures", None) or ()
    return tuple(dict.fromkeys([*configured, *(m.key for m in DEFAULT_MEASURES)]))


def _target(data: RunData, dataset: str | None) -> str:
    names = data.datasets([dataset] if dataset else [])
    if len(names) > 1:
        raise ConfigError(
            f"the run has several datasets ({', '.join(names)}): expected --dataset NAME for the judgments"
        )
    return names[0]


def _score_dataset(
    data: RunData, name: str, ds: Dataset, measures: tuple[str, ...], seed: int, used: JudgmentsUsed
) -> tuple[DatasetResult, dict[str, Evaluation]]:
    old = data.results.datasets[name]
    arms, evaluations = {}, {}
    for arm, result in old.arms.items():
        ev = evaluate(ds.qrels, rank_run(data.ranking(name, arm)), measures)
        metrics, ci95 = scores_and_intervals(ev, seed)
        arms[arm] = replace(
            result, metrics=metrics, ci95=ci95, empty_queries=ev.empty_qids, queries=len(ev.qids)
        )
        evaluations[arm] = ev
    return replace(old, arms=arms, fingerprint=ds.fingerprint.combined, judgments=used), evaluations


def _rows(name: str, evaluations: dict[str, Evaluation]) -> list[QueryScores]:
    return [
        QueryScores(name, arm, q, {m: round(ev.per_query[m][q], 6) for m in ev.per_query})
        for arm, ev in evaluations.items()
        for q in ev.qids
    ]


def _significance(
    results: RunResults, name: str, evaluations: dict[str, Evaluation], manifest: Manifest
) -> dict[str, tuple[Comparison, ...]]:
    """The run's paired tests with ``name``'s redone (same pairs, test, alpha, seed), Holm over all again.

    The other datasets' raw p-values are the run's own; only the correction is recomputed, as
    the family (every comparison of the run) now holds new p-values.
    """
    pairs = list(dict.fromkeys((c.arm_a, c.arm_b) for c in results.datasets[name].significance))
    alpha = float(_config(manifest, "stats.alpha", 0.05))
    redone: list[Comparison] = []
    if pairs:
        per_query = {name: {arm: ev.per_query[PRIMARY_MEASURE.key] for arm, ev in evaluations.items()}}
        test = str(_config(manifest, "stats.test", "randomization"))
        seed = int(_config(manifest, "stats.seed", 42))
        redone = compare_arms(
            per_query, pairs, measure=PRIMARY_MEASURE.key, test=test, alpha=alpha, seed=seed
        )
    family = [c for n, d in results.datasets.items() if n != name for c in d.significance] + redone
    adjusted = holm([c.p_value for c in family])
    fixed = [replace(c, p_holm=p, significant=p < c.alpha) for c, p in zip(family, adjusted, strict=True)]
    return {n: tuple(c for c in fixed if c.dataset == n) for n in results.datasets}


def _used(
    before: JudgmentsUsed | None, judgments: Judgments, mode: str, judge: JudgeProvenance | None
) -> JudgmentsUsed:
    """What the re-scored figures were scored with: the run's judgments and the file's, as ``mode`` met them."""
    return judgments_used(before, f"{Path(judgments.path).name} ({judgments.sha256[:8]})", mode, judge)


def _applied(
    name: str, judgments: Judgments, ds: Dataset, mode: str
) -> tuple[Dataset, JudgmentsApplied, JudgeProvenance | None]:
    mapped = judgments.qrels(ds.queries)
    judge = load_provenance(Path(judgments.path), judgments.sha256)
    merged = merge_judgments(ds.qrels, mapped.qrels, mode)
    if not merged.qrels:
        raise ConfigError(
            f"{judgments.path} judges none of the {len(ds.queries)} queries of {name}: nothing to score"
        )
    applied = JudgmentsApplied(
        dataset=name,
        path=str(Path(judgments.path).resolve()),
        format=judgments.format,
        sha256=judgments.sha256,
        judgments=mapped.judgments,
        added=merged.added,
        changed=merged.changed,
        unknown=len(mapped.unknown),
        ungraded=judgments.ungraded,
        qrels_file=str(qrels_path(Path("."), name)),
        judge=judge.id if judge is not None else None,
    )
    return ds.with_qrels(merged.qrels), applied, judge


def rescore(req: RescoreRequest) -> tuple[Path, RunResults]:
    """Re-score ``req.run_dir`` with the judgments of ``req.qrels``; returns the new directory and results."""
    data = RunData.load(req.run_dir)
    name = _target(data, req.dataset)
    judgments = read_judgments(req.qrels, req.format)
    out = Path(req.out) if req.out is not None else default_out(req.run_dir, judgments)
    _check_out(out, req.run_dir, judgments)
    manifest = data.results.manifest
    ds, applied, judge = _applied(name, judgments, data.dataset(name, req.data_path), req.mode)
    seed = int(_config(manifest, "stats.seed", 42))
    used = _used(data.results.datasets[name].judgments, judgments, req.mode, judge)
    scored, evaluations = _score_dataset(data, name, ds, _measures(manifest), seed, used)
    rows = [r for r in load_per_query(req.run_dir) if r.dataset != name] + _rows(name, evaluations)
    datasets = {n: (scored if n == name else d) for n, d in data.results.datasets.items()}
    tests = _significance(data.results, name, evaluations, manifest)
    datasets = {n: replace(d, significance=tests.get(n, d.significance)) for n, d in datasets.items()}
    info = RescoreInfo(
        source_run=manifest.run_id,
        source_dir=str(Path(req.run_dir).resolve()),
        created=datetime.now(UTC).isoformat(),
        mode=req.mode,
        judgments=(applied,),
    )
    new_manifest = replace(
        manifest,
        run_id=f"{manifest.run_id}~{out.name}",
        rescore=info,
        datasets={
            n: replace(
                i,
                fingerprint={
                    **i.fingerprint,
                    "qrels": ds.fingerprint.qrels,
                    "combined": ds.fingerprint.combined,
                },
            )
            if n == name
            else i
            for n, i in manifest.datasets.items()
        },
    )
    results = RunResults(datasets=datasets, manifest=new_manifest)
    _write(out, data, results, rows, {name: ds})
    return out, results


def _write(
    out: Path, data: RunData, results: RunResults, rows: list[QueryScores], judged: dict[str, Dataset]
) -> None:
    """The new run directory; ``manifest.json`` goes last, as in a run."""
    shutil.copytree(data.run_dir / RUNS_FOLDER, out / RUNS_FOLDER, dirs_exist_ok=True)
    old_qrels = data.run_dir / QRELS_FOLDER
    if old_qrels.is_dir():
        shutil.copytree(old_qrels, out / QRELS_FOLDER, dirs_exist_ok=True)
    if (data.run_dir / OVERLAP_FILE).is_file():  # agreement between arms needs no judgments: it stays
        shutil.copy2(data.run_dir / OVERLAP_FILE, out / OVERLAP_FILE)
    for name, ds in judged.items():
        write_text_atomic(qrels_path(out, name), qrels_text(ds.qrels))
    write_jsonl_atomic(out / PER_QUERY_FILE, (r.to_json() for r in rows))
    results.save(out)
    write_text_atomic(out / REPORT_FILE, render_markdown(results))
    results.manifest.save(out)
