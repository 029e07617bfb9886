"""Where an experiment's judgments come from: one source per module, chosen by ``judgments.source``.

    [judgments]                    # or --set judgments.source=judge --set judgments.llm=MODEL ...
    source = "judge"               # files (default) | clicks | judge
    mode = "merge"                 # how its labels meet the dataset's: merge | fill | replace
    llm = "gpt-4o-mini"            # every other key is the source's own (Source.keys)

* :mod:`._files`: the dataset's own judgments (its qrels, or ``data.qrels``);
* :mod:`._clicks`: a User Behavior Insights log through a click model (COEC, CTR), before any search;
* :mod:`._judge`: an LLM judge over the pooled top-k of the run's arms, after the search, before scoring.

Each :class:`Source` declares its keys as tables (:attr:`Source.tables`: the click model's, the judge's and
the pool's own), built by the one builder every command uses (:func:`harness.experiment.settings`), and gives
:class:`Judged`: the dataset to score with and what the figures say they were scored with
(``DatasetResult.judgments``: a judge's provenance and agreement, which every table and ``harness gate`` show).
"""

from harness.judgments.sources._base import AfterSearch, BeforeSearch, Judged, Source
from harness.judgments.sources._clicks import Clicks
from harness.judgments.sources._files import Files
from harness.judgments.sources._judge import Judge, PoolKeys

#: every judgments source by its name (``judgments.source``)
SOURCES: dict[str, type[Source]] = {kind.name: kind for kind in (Files, Clicks, Judge)}
DEFAULT_SOURCE = Files.name

__all__ = [
    "DEFAULT_SOURCE",
    "SOURCES",
    "AfterSearch",
    "BeforeSearch",
    "Clicks",
    "Files",
    "Judge",
    "Judged",
    "PoolKeys",
    "Source",
]
