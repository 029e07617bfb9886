"""Expansions generated through an OpenAI-compatible chat endpoint (``harness expand``).

    config = ExpandConfig(dataset="sample", method="hyde", model="gpt-4o-mini",
                          endpoint=Endpoint.resolve("http://127.0.0.1:8000/v1"))
    result = expand(config)          # writes <root>/hyde/gpt-4o-mini/query_with_hydoc.jsonl

Prompts are our own (``harness/resources/prompts``) or a user's TOML file; answers are cached, so an
interrupted run resumes and a second run makes no call; see :mod:`harness.expand._expand`.
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
from harness.expand._prompts import PromptTemplate, builtin_prompt, load_prompt

__all__ = [
    "GENERATION_METHODS",
    "META_SUFFIX",
    "PASSAGE_WORDS",
    "ExpandConfig",
    "ExpandResult",
    "FirstStage",
    "GenerationMethod",
    "GenerationSettings",
    "GenerationStats",
    "Generator",
    "PromptTemplate",
    "Task",
    "builtin_prompt",
    "expand",
    "first_stage",
    "format_passages",
    "llm_folder_name",
    "load_prompt",
    "output_path",
]
