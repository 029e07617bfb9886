"""What every judgments source is: its keys, read once into a typed source, and the one thing it does.

A source is a frozen dataclass built from the keys of an experiment's ``[judgments]`` table
(:meth:`Source.from_settings`, every refusal a :class:`~harness._errors.SettingError` naming its key).
Sources that need nothing of the search judge the loaded dataset before it (:meth:`Source.before_search`:
the files it came with, click logs); a source that needs the arms' results (an LLM judge over their
pooled top-k) says so (``after_search``) and judges them after the search, before any score
(:meth:`Source.after_search`). Either way it returns the dataset to score with and what every figure
scored with it says it used (:class:`Judged`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from harness.results import JudgmentsUsed, Ranking
from indexer import Backend, ConnectionSettings, Dataset


@dataclass(frozen=True, slots=True)
class Setting:
    """A value given for one of a source's keys, and where a relative path given for it starts (the experiment
    file's folder; None: the working directory)."""

    value: Any
    base: Path | None = None

    def path(self, text: str) -> str:
        """``text`` as a path from where it was written."""
        path = Path(text).expanduser()
        return str(self.base / path if self.base is not None and not path.is_absolute() else path)


@dataclass(frozen=True, slots=True)
class Key:
    """One key of a source: what it is, and its default as the component that owns it defines it."""

    doc: str
    default: Any = None


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
    keys: ClassVar[Mapping[str, Key]] = {}
    #: whether it brings labels of its own (which meet the dataset's as ``judgments.mode`` says)
    labels: ClassVar[bool] = True
    #: whether it needs the arms' results (then it judges after the search, before any score)
    after_search: ClassVar[bool] = False

    @classmethod
    def from_settings(cls, values: Mapping[str, Setting]) -> Source:
        """The source of the keys given (each one of :attr:`keys`)."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """What of the source changes results (the run's config hash covers it)."""
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
