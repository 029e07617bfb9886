"""Which judgments scored a dataset, and how far a judge that made them agrees with people.

* :func:`judgments_line`: the one line every figure of a dataset carries (its own judgments, or a
  file's, or a judge's with its id and measured agreement), :func:`judgments_summary` for a run's;
* :func:`agreement_tables`: for labels from a judge, the agreement with human judgments (Cohen's
  kappa binary and weighted, parse failures, Fleiss' kappa among judges, Kendall's tau and
  Spearman's rho of the arms), the confusion matrix, and the arms' nDCG@10 under both labellings.
"""

from __future__ import annotations

from base import slug
from harness.eval import Kappa
from harness.inspect._table import Cell, Column, Table
from harness.results import DatasetResult, JudgeAgreement, JudgeProvenance, LabelAgreement, RunResults


def judgments_line(ds: DatasetResult) -> str:
    """``judgments: ...`` for the notes of every table of the dataset."""
    used = ds.judgments
    if used is None:
        return "judgments: the dataset's own"
    text = f"judgments: {used.label}"
    if used.judge is not None:
        text += f"; judge {used.judge.id}: {used.judge.agreement_text()}"
    return text


def judgments_summary(results: RunResults) -> str:
    """``judgments: sample: the dataset's own; other: ...`` for the tables that span datasets."""
    parts = [
        f"{name}: {judgments_line(ds).removeprefix('judgments: ')}" for name, ds in results.datasets.items()
    ]
    return "judgments: " + "; ".join(parts)


def _kappa(k: Kappa | None) -> Cell:
    if k is None:
        return Cell("–")
    return Cell(f"{k.value:.3f}", aside=f"[{k.low:.3f},{k.high:.3f}]")


def _row(a: LabelAgreement, label: str) -> tuple[Cell, ...]:
    s = a.systems
    return (
        Cell(label),
        Cell(f"{a.pairs:,}"),
        _kappa(a.binary),
        _kappa(a.weighted),
        Cell(str(a.parse_failures)),
        Cell(f"{s.kendall_tau:.3f}" if s else "–"),
        Cell(f"{s.spearman_rho:.3f}" if s else "–"),
    )


def _agreement(name: str, judge: JudgeProvenance, agreement: JudgeAgreement) -> Table:
    rows = [_row(a, a.judge) for a in agreement.judges]
    rows.append(_row(agreement.combined, f"{judge.combine} of the judges" if agreement.judges else judge.id))
    headers = ("judge", "pairs", "kappa", "weighted", "parse failures", "tau", "rho")
    notes = [f"human labels: {agreement.human}.", NOTE]
    if agreement.fleiss_kappa is not None:
        notes.insert(
            0,
            f"Fleiss' kappa among the {len(agreement.judges)} judges: {agreement.fleiss_kappa:.3f} on the "
            f"{agreement.fleiss_pairs:,} pairs every judge labelled.",
        )
    return Table(
        title=f"{name}: judge agreement with human judgments",
        columns=tuple(Column(h, "left" if i == 0 else "right") for i, h in enumerate(headers)),
        rows=tuple(rows),
        key=f"judge-agreement-{slug(name, fallback='x')}",
        notes=tuple(notes),
    )


def _confusion(name: str, a: LabelAgreement) -> Table:
    labels = a.confusion.labels
    rows = tuple(
        (Cell(f"human {label}"), *(Cell(f"{n:,}") for n in counts))
        for label, counts in zip(labels, a.confusion.counts, strict=True)
    )
    return Table(
        title=f"{name}: human grade (rows) against judge label (columns)",
        columns=(Column("", "left"), *(Column(f"judge {label}") for label in labels)),
        rows=rows,
        key=f"judge-confusion-{slug(name, fallback='x')}",
    )


def _systems(name: str, a: LabelAgreement) -> Table | None:
    s = a.systems
    if s is None:
        return None
    rows = tuple(
        (Cell(arm), Cell(f"{h:.4f}"), Cell(f"{j:.4f}"))
        for arm, h, j in zip(s.systems, s.human, s.judge, strict=True)
    )
    return Table(
        title=f"{name}: arms by {s.measure} under human and judge labels ({s.queries} queries)",
        columns=(Column("arm", "left"), Column(f"{s.measure} human"), Column(f"{s.measure} judge")),
        rows=rows,
        key=f"judge-systems-{slug(name, fallback='x')}",
        notes=(f"Kendall's tau {s.kendall_tau:.3f}, Spearman's rho {s.spearman_rho:.3f}.",),
    )


def agreement_tables(name: str, judge: JudgeProvenance | None) -> list[Table]:
    """The agreement tables of labels from ``judge`` (none when its agreement was never measured)."""
    if judge is None or judge.agreement is None:
        return []
    combined = judge.agreement.combined
    tables = [_agreement(name, judge, judge.agreement), _confusion(name, combined)]
    systems = _systems(name, combined)
    return [*tables, *([systems] if systems is not None else [])]


NOTE = (
    "kappa = Cohen's kappa of relevant / not relevant on the pairs both labelled (1 = full agreement, 0 = what "
    "chance gives), with its 95% bootstrap interval; weighted = linear-weighted kappa on the grades (when the human "
    "judgments are graded); parse failures = answers that were not a label on the scale (never given a grade; for "
    "the combination: pairs no judge labelled); tau / rho = Kendall's tau-b and Spearman's rho of the arms ordered "
    "by nDCG@10 under human and under judge labels."
)
