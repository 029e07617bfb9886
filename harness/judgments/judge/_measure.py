"""How far a judge agrees with people: on labels (Cohen's kappa, confusion), among judges (Fleiss'
kappa), and on systems (Kendall's tau and Spearman's rho of the arms ordered by nDCG@10).

Human labels are the dataset's judgments (never a re-scored run's, which may hold a judge's labels).
A pool also holds pairs people never judged; how those
count is ``human_unjudged``: ``zero`` (not relevant, as every nDCG of the run assumes), ``skip``
(left out of the label agreement), or ``auto``: ``zero`` when the judgments hold no grade 0 at all
(sets such as SciFact list only the relevant documents), ``skip`` otherwise. Agreement is measured
only when people judged some pair of the set; otherwise it stays unmeasured (``None``).

Binary kappa compares relevant / not relevant: human grade >= 1, judge label >= its scale's
threshold (2 on the graded scale, as TREC DL binarises). Weighted kappa (linear) compares the
grades themselves, when the human judgments are graded too (some grade above 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.eval import cohen_kappa, confusion, evaluate, fleiss_kappa, kendall_tau, spearman_rho
from harness.judgments.judge._judge import JudgeRun, Qrels
from harness.judgments.judge._pairs import PairSet
from harness.results import JudgeAgreement, LabelAgreement, SystemAgreement, rank_run

SYSTEM_MEASURE = "ndcg@10"
WEIGHTS = "linear"


@dataclass(frozen=True, slots=True)
class HumanLabels:
    """The human side: a label for each pair that has one under the unjudged policy, and what that was."""

    labels: dict[tuple[str, str], int]
    policy: str
    graded: bool

    def describe(self, dataset: str) -> str:
        unjudged = "counted as 0 (not relevant)" if self.policy == "zero" else "left out"
        return f"{dataset}'s judgments; pooled pairs they do not judge {unjudged}"


def human_labels(pairs: PairSet, policy: str) -> HumanLabels | None:
    """The human labels of the set's pairs, or None when people judged none of them (or when the run's
    judgments hold a judge's labels: they are not people's)."""
    qrels = pairs.dataset.qrels
    if pairs.judged == 0 or pairs.judge_in_judgments is not None:
        return None
    grades = [g for docs in qrels.values() for g in docs.values()]
    if policy == "auto":
        policy = "zero" if 0 not in grades else "skip"
    labels = {}
    for p in pairs.pairs:
        grade = qrels.get(p.qid, {}).get(p.doc_id)
        if grade is not None or policy == "zero":
            labels[(p.qid, p.doc_id)] = grade or 0
    return HumanLabels(labels, policy, max(grades, default=0) > 1)


def _label_agreement(
    judge: str, labels: Qrels, human: HumanLabels, run: JudgeRun, failures: int
) -> LabelAgreement | None:
    """One judge's labels against the human ones (None: it labelled none of the pairs people label)."""
    keys = [k for k in human.labels if k[1] in labels.get(k[0], {})]
    if not keys:
        return None
    h = [human.labels[k] for k in keys]
    j = [labels[k[0]][k[1]] for k in keys]
    scale = run.spec.scale
    binary = cohen_kappa([int(g >= 1) for g in h], [scale.relevant(x) for x in j], labels=[0, 1])
    grades = sorted(set(scale.labels) | set(h))
    weighted = cohen_kappa(h, j, labels=grades, weights=WEIGHTS) if human.graded and scale.top > 1 else None
    return LabelAgreement(
        judge=judge,
        pairs=len(keys),
        binary=binary,
        confusion=confusion(h, j, labels=grades),
        parse_failures=failures,
        weighted=weighted,
        systems=systems_agreement(run.pairs, labels),
    )


def systems_agreement(pairs: PairSet, labels: Qrels) -> SystemAgreement | None:
    """The pooled arms' nDCG@10 under the human judgments and under ``labels``, on the queries both
    judge, and how alike the two orderings are (None: fewer than two arms)."""
    if len(pairs.rankings) < 2:
        return None
    qids = sorted(q for q in labels if labels[q] and q in pairs.dataset.qrels)
    if not qids:
        return None
    human = {q: pairs.dataset.qrels[q] for q in qids}
    judge = {q: labels[q] for q in qids}
    scores: list[tuple[float, float]] = []
    for ranking in pairs.rankings.values():
        run = rank_run({q: ranking.get(q, []) for q in qids})
        scores.append((_mean(human, run), _mean(judge, run)))
    h, j = [s[0] for s in scores], [s[1] for s in scores]
    return SystemAgreement(
        SYSTEM_MEASURE, pairs.arms, tuple(h), tuple(j), kendall_tau(h, j), spearman_rho(h, j), len(qids)
    )


def _mean(qrels: Qrels, run: dict[str, dict[str, float]]) -> float:
    return round(evaluate(qrels, run, [SYSTEM_MEASURE]).mean(SYSTEM_MEASURE), 6)


def _fleiss(run: JudgeRun) -> tuple[float | None, int]:
    if len(run.spec.judges) < 2:
        return None, 0
    rows: Sequence[list[int]] = [
        [v.label for v in j.verdicts if v.label is not None]
        for j in run.judged
        if all(v.label is not None for v in j.verdicts)
    ]
    if not rows:
        return None, 0
    return fleiss_kappa(rows, labels=run.spec.scale.labels), len(rows)


def measure_agreement(run: JudgeRun) -> JudgeAgreement | None:
    """Every judge's and the combination's agreement with people, or None when people judged no pair."""
    human = human_labels(run.pairs, run.spec.human_unjudged)
    if human is None or not human.labels:
        return None
    judges = tuple(
        found
        for i, j in enumerate(run.spec.judges)
        if (found := _label_agreement(j.id, run.judge_labels(i), human, run, run.parse_failures(i)))
    )
    combined = _label_agreement(run.spec.id, run.labels, human, run, run.unlabelled)
    if combined is None:
        return None
    fleiss, fleiss_pairs = _fleiss(run)
    return JudgeAgreement(
        dataset=run.pairs.dataset.name,
        human=human.describe(run.pairs.dataset.name),
        combined=combined,
        judges=judges if len(judges) > 1 else (),
        fleiss_kappa=fleiss,
        fleiss_pairs=fleiss_pairs,
    )
