"""What every judgments source is: its keys, read once into a typed source, and the one thing it does.

A source is a frozen dataclass built from tables of keys (:attr:`Source.tables`, each a table of
:func:`harness.keys.key` fields under ``judgments.``, read by the one builder every command uses), by
:meth:`Source.from_tables` (a refusal there is a :class:`~harness._errors.SettingError` naming its key).
Sources that need nothing of the search judge the loaded dataset before it (:meth:`Source.before_search`:
the files it came with, click logs); a source that needs the arms' results (an LLM judge over their
pooled top-k) says so (``after_search``) and judges them after the search, before any score
(:meth:`Source.after_search`). Either way it returns the dataset to score with and what every figure
scored with it says it used (:class:`Judged`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from harness.results import JudgmentsUsed, Ranking
from indexer import Backend, ConnectionSettings, Dataset


@dataclass(frozen=True, slots=True)
class Judged:
    """A dataset's judgments as a source left them: the dataset to score with, what the figures scored with it
    say they used (None: the dataset's own), lines to print, and what to keep beside the run's judgments."""

    dataset: Dataset
    used: JudgmentsUsed | None = None
    notes: tuple[str, ...] = ()
    beside: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class BeforeSearch:
    """What a source judging before the search is given: how its labels meet the dataset's, and the cluster."""

    mode: str
    connection: Callable[[], ConnectionSettings]


@dataclass(frozen=True, slots=True)
class AfterSearch:
    """What a source judging the arms' results is given: how its labels meet the dataset's, the run directory
    (its files go there), the index the arms searched and the cluster (documents read from it), the console."""

    mode: str
    run_dir: Path
    index: str
    backend: Backend
    console: Console
    progress: bool = True


class Source:
    """One place judgments come from (see the module doc); subclasses are frozen dataclasses."""

    __slots__ = ()
    name: ClassVar[str]
    doc: ClassVar[str]
    #: the tables of its keys (``judgments.KEY``), in the order :meth:`from_tables` takes them built
    tables: ClassVar[tuple[type, ...]] = ()
    #: whether it brings labels of its own (which meet the dataset's as ``judgments.mode`` says)
    labels: ClassVar[bool] = True
    #: whether it needs the arms' results (then it judges after the search, before any score)
    after_search: ClassVar[bool] = False

    @classmethod
    def from_tables(cls, tables: Sequence[Any]) -> Source:
        """The source of its keys, built (one instance of each of :attr:`tables`, in their order)."""
        return cls()

    def key_tables(self) -> tuple[Any, ...]:
        """Its keys as built (one instance of each of :attr:`tables`): the run's config hash covers those
        that affect results."""
        return ()

    def identity(self) -> dict[str, Any]:
        """What its keys resolve to that changes results, beyond their values (a template file's hash)."""
        return {}

    @property
    def named_arms(self) -> tuple[str, ...]:
        """The run's arms it names (checked against the experiment's)."""
        return ()

    def before_search(self, ds: Dataset, ctx: BeforeSearch) -> Judged:
        """The dataset's judgments before the search (default: the dataset's own)."""
        return Judged(ds)

    def judge(self, ds: Dataset, rankings: Mapping[str, Ranking], ctx: AfterSearch) -> Judged:
        """The judgments of the arms' ``rankings`` (arm -> query -> documents), for a source ``after_search``."""
        raise NotImplementedError(f"judgments source {self.name} judges before the search")
