"""LLM judges (``harness judge``): labels for (query, document) pairs, with their agreement with people.

    spec = JudgeOptions(llm=("gpt-4o-mini",), template=("graded",), llm_url=URL).build()  # keys judgments.*
    pairs = pairs_from_run(run_dir, arms=("lexical", "vector", "hybrid"), depth=10)
    # or pairs_from_rankings(dataset, {arm: ranking}) (an experiment's), or pairs_from_file(path, dataset)
    result = judge_and_write(spec, pairs)              # judgments.qrels + its provenance, answers.jsonl

* :class:`JudgeOptions` (a table of keys, ``judgments.*``) -> :class:`JudgeSpec`: judges (models x
  templates, one scale), how their labels combine (:data:`COMBINERS`), the context fields and where they
  come from (:class:`ContextSpec`, :data:`CONTEXT_SOURCES`), the token limit, the endpoint;
* prompts (:mod:`._prompt`): packaged Mustache templates ``graded`` (0-3, UMBRELA-style) and ``binary``,
  or a user's file, its variables checked when read; query and document passed inside delimiters
  (:mod:`._text`); answers read strictly (:func:`parse_answer`: a label on the scale, or a counted failure);
* :func:`judge_pairs` -> :class:`JudgeRun` (costs printed before any call; cached, resumable, retried);
* :func:`measure_agreement` -> :class:`~harness.results.JudgeAgreement` (Cohen's kappa binary and weighted,
  confusion, Fleiss' kappa, Kendall's tau / Spearman's rho of the arms), None where people judged nothing;
* :func:`write_judgments` (read back by :func:`harness.results.load_provenance`): the labels as TREC qrels with their provenance beside
  them, which ``harness rescore`` and ``harness gate`` carry into every figure.
"""

from harness.judgments.judge._client import ENDPOINT_DEFAULTS, JUDGE_SETTINGS
from harness.judgments.judge._combine import COMBINERS, combine, combiner
from harness.judgments.judge._context import CONTEXT_SOURCES, ContextSpec, read_context
from harness.judgments.judge._judge import JudgedPair, JudgeRun, Verdict, judge_pairs
from harness.judgments.judge._measure import HumanLabels, human_labels, measure_agreement, systems_agreement
from harness.judgments.judge._output import (
    ANSWERS_FILE,
    QRELS_FILE,
    judgments_folder,
    provenance,
    write_judgments,
)
from harness.judgments.judge._pairs import (
    DEFAULT_DEPTH,
    Pair,
    PairSet,
    pairs_from_file,
    pairs_from_rankings,
    pairs_from_run,
    read_pairs,
)
from harness.judgments.judge._pipeline import JudgeResult, default_output, judge_and_write
from harness.judgments.judge._prompt import (
    BUILTIN_PROMPTS,
    VARIABLES,
    JudgePrompt,
    builtin_prompt,
    load_prompt,
)
from harness.judgments.judge._scale import SCALES, Parsed, Scale, parse_answer
from harness.judgments.judge._spec import (
    DEFAULT_COMBINE,
    DEFAULT_TEMPLATE,
    HUMAN_UNJUDGED,
    Judge,
    JudgeOptions,
    JudgeSpec,
)
from harness.judgments.judge._text import count_tokens, document_block, neutralise, query_block, truncate

__all__ = [
    "ANSWERS_FILE",
    "BUILTIN_PROMPTS",
    "COMBINERS",
    "CONTEXT_SOURCES",
    "DEFAULT_COMBINE",
    "DEFAULT_DEPTH",
    "DEFAULT_TEMPLATE",
    "ENDPOINT_DEFAULTS",
    "HUMAN_UNJUDGED",
    "JUDGE_SETTINGS",
    "QRELS_FILE",
    "SCALES",
    "VARIABLES",
    "ContextSpec",
    "HumanLabels",
    "Judge",
    "JudgeOptions",
    "JudgePrompt",
    "JudgeResult",
    "JudgeRun",
    "JudgeSpec",
    "JudgedPair",
    "Pair",
    "PairSet",
    "Parsed",
    "Scale",
    "Verdict",
    "builtin_prompt",
    "combine",
    "combiner",
    "count_tokens",
    "default_output",
    "document_block",
    "human_labels",
    "judge_and_write",
    "judge_pairs",
    "judgments_folder",
    "load_prompt",
    "measure_agreement",
    "neutralise",
    "pairs_from_file",
    "pairs_from_rankings",
    "pairs_from_run",
    "parse_answer",
    "provenance",
    "query_block",
    "read_context",
    "read_pairs",
    "systems_agreement",
    "truncate",
    "write_judgments",
]
