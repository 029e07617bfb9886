"""Expansions: generated through an OpenAI-compatible chat endpoint (``harness expand``), and read back
for a run (R2MED's reading: which text each method searches with, reasoning traces split off).

    config = ExpandConfig(dataset="sample", method="hyde", model="gpt-4o-mini",
                          endpoint=Endpoint.resolve("http://127.0.0.1:8000/v1"))
    result = expand(config)          # writes <root>/hyde/gpt-4o-mini/query_with_hydoc.jsonl

Prompts are our own (``harness/resources/prompts``) or a user's TOML file; answers are cached, so an
interrupted run resumes and a second run makes no call; see :mod:`harness.expand._expand`.

    expansion = select_expansion(dataset, "hyde:gpt-4o-mini")   # an expansion set, ready to search with
    expansion.lexical_text(qid, query), expansion.dense_texts(qid, query)

Reasoning traces (:mod:`harness.expand._reasoning`): a table keyed by model family says how to split one off.
"""

from harness.expand._expand import (
    GENERATION_METHODS,
    META_SUFFIX,
    ExpandConfig,
    ExpandResult,
    GenerationMethod,
    expand,
    llm_folder_name,
    output_path,
)
from harness.expand._first_stage import PASSAGE_WORDS, FirstStage, first_stage, format_passages
from harness.expand._generate import GenerationSettings, GenerationStats, Generator, Task
from harness.expand._keys import ExpandKeys
from harness.expand._prompts import PromptTemplate, builtin_prompt, load_prompt
from harness.expand._reading import (
    DENSE_SEPARATOR,
    EXPANSIONS,
    Expansion,
    ExpansionMethod,
    combine_dense,
    parse_expansion,
    select_expansion,
    split_reasoning,
)
from harness.expand._reasoning import (
    AUTO,
    NONE,
    REASONING_FORMATS,
    ReasoningFormat,
    after_heading,
    after_marker,
    between_tags,
    choose_reasoning_format,
    reasoning_format_for,
)

__all__ = [
    "AUTO",
    "DENSE_SEPARATOR",
    "EXPANSIONS",
    "GENERATION_METHODS",
    "META_SUFFIX",
    "NONE",
    "PASSAGE_WORDS",
    "REASONING_FORMATS",
    "ExpandConfig",
    "ExpandKeys",
    "ExpandResult",
    "Expansion",
    "ExpansionMethod",
    "FirstStage",
    "GenerationMethod",
    "GenerationSettings",
    "GenerationStats",
    "Generator",
    "PromptTemplate",
    "ReasoningFormat",
    "Task",
    "after_heading",
    "after_marker",
    "between_tags",
    "builtin_prompt",
    "choose_reasoning_format",
    "combine_dense",
    "expand",
    "first_stage",
    "format_passages",
    "llm_folder_name",
    "load_prompt",
    "output_path",
    "parse_expansion",
    "reasoning_format_for",
    "select_expansion",
    "split_reasoning",
]
