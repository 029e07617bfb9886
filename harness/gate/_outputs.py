"""A gate's outcomes for people and for CI systems: one table (terminal, Markdown), JUnit XML.

The JUnit file has one ``<testsuite>`` per dataset and one ``<testcase>`` per rule on that
dataset: a failed rule carries a ``<failure>``, a rule that could not be evaluated an
``<error>``, and every case carries its message in ``<system-out>`` (so a flagged rule, which
passes, still says why it was flagged). The Markdown summary is written for a CI step
summary (``$GITHUB_STEP_SUMMARY``). A rule over an LLM judge's labels says so everywhere: the
table's notes and the Markdown name the judge and its measured agreement, and its JUnit case
carries them as ``judge`` and ``judge_agreement`` properties and in its ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime

from harness.gate._model import GateReport, Outcome, Status
from harness.inspect import Cell, Column, Table, to_markdown

MARKS = {Status.PASS: "✅", Status.FLAGGED: "⚠️", Status.FAIL: "❌", Status.ERROR: "⛔"}


def gate_table(report: GateReport) -> Table:
    """One row per rule and dataset: the rule, its outcome and why (observed value, limit, test)."""
    rows = tuple(
        (Cell(o.dataset), Cell(o.rule.text), Cell(o.status.label), Cell(o.message)) for o in report.outcomes
    )
    columns = tuple(Column(h, "left") for h in ("dataset", "rule", "outcome", "why"))
    against = f" against baseline {report.baseline_id}" if report.baseline_id else ""
    notes: tuple[str, ...] = (*judge_notes(report), report.summary())
    if any(o.rule.kind == "regression" for o in report.outcomes):
        notes = (
            f"regressions: paired {report.test} test per rule on per-query scores, Holm-corrected over all "
            f"regression checks, alpha {report.alpha:g}; a rule fails only when its drop exceeds the margin and is "
            "significant",
            *notes,
        )
    return Table(
        title=f"gate: run {report.run_id}{against}", columns=columns, rows=rows, key="gate", notes=notes
    )


def judge_notes(report: GateReport) -> list[str]:
    """One line per dataset whose rules read an LLM judge's labels: the judge and its measured agreement."""
    seen: dict[str, str] = {}
    for o in report.outcomes:
        if o.judge is not None:
            seen.setdefault(o.dataset, f"{o.dataset}: rules over relevance read {o.judge_note}")
    return list(seen.values())


def markdown_summary(report: GateReport) -> str:
    """A step summary: the verdict first, then every check (the same table as the terminal's)."""
    mark = {0: "✅", 1: "❌", 2: "⛔"}[report.exit_code]
    lines = [f"## {mark} harness gate {report.verdict}", "", report.summary(), ""]
    flagged = [o for o in report.outcomes if o.status is Status.FLAGGED]
    if flagged:
        lines += ["Flagged (passing, but worth a look):", ""]
        lines += [f"- ⚠️ `{o.rule.text}` on {o.dataset}: {o.message}" for o in flagged]
        lines.append("")
    table = gate_table(report)
    marked = tuple(
        (*row[:2], Cell(f"{MARKS[o.status]} {o.status.label}"), row[3])
        for row, o in zip(table.rows, report.outcomes, strict=True)
    )
    lines.append(to_markdown(Table(table.title, table.columns, marked, table.key, table.notes[:-1])))
    return "\n".join(lines).rstrip() + "\n"


def _cases(report: GateReport, dataset: str) -> Iterator[Outcome]:
    return (o for o in report.outcomes if o.dataset == dataset)


def junit_xml(report: GateReport) -> str:
    """JUnit XML: a suite per dataset, a case per rule (failures and errors with their messages)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    root = ET.Element(
        "testsuites",
        name="harness gate",
        tests=str(len(report.outcomes)),
        failures=str(report.count(Status.FAIL)),
        errors=str(report.count(Status.ERROR)),
    )
    for dataset in dict.fromkeys(o.dataset for o in report.outcomes):
        cases = list(_cases(report, dataset))
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"harness gate: {dataset}",
            tests=str(len(cases)),
            failures=str(sum(c.status is Status.FAIL for c in cases)),
            errors=str(sum(c.status is Status.ERROR for c in cases)),
            skipped="0",
            timestamp=now,
        )
        props = ET.SubElement(suite, "properties")
        for name, value in (("run", report.run_id), ("baseline", report.baseline_id or "")):
            ET.SubElement(props, "property", name=name, value=value)
        for case in cases:
            _case(suite, case)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(suite: ET.Element, o: Outcome) -> None:
    case = ET.SubElement(suite, "testcase", classname=f"harness.gate.{o.dataset}", name=o.rule.text, time="0")
    if o.judge is not None:
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="judge", value=o.judge.id)
        ET.SubElement(props, "property", name="judge_agreement", value=o.judge.agreement_text())
    if o.status is Status.FAIL:
        ET.SubElement(case, "failure", message=o.message, type=o.rule.kind).text = o.message
    elif o.status is Status.ERROR:
        ET.SubElement(case, "error", message=o.message, type="cannot-evaluate").text = o.message
    note = f"\n{o.judge_note}" if o.judge is not None else ""
    ET.SubElement(case, "system-out").text = f"{o.status.label}: {o.message}{note}"


def junit_error(message: str) -> str:
    """The JUnit file of a gate that could not start (one erroring case), so CI still shows why."""
    root = ET.Element("testsuites", name="harness gate", tests="1", failures="0", errors="1")
    suite = ET.SubElement(
        root, "testsuite", name="harness gate", tests="1", failures="0", errors="1", skipped="0"
    )
    case = ET.SubElement(suite, "testcase", classname="harness.gate", name="evaluate the gate", time="0")
    ET.SubElement(case, "error", message=message, type="cannot-evaluate").text = message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def markdown_error(message: str) -> str:
    return f"## ⛔ harness gate could not evaluate\n\n```\n{message}\n```\n"
