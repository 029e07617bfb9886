"""The endpoint options `harness run` takes today (``--base-url``, ``--api-key-env``).

`harness index` and `harness expand` name theirs by purpose (``--embed-url``/``--embed-key-env``,
``--llm-url``/``--llm-key-env``, in :mod:`harness.cli._options`); this module goes when `harness run`
does the same.
"""

from __future__ import annotations

from typing import Annotated

import typer

from indexer import DEFAULT_KEY_ENV

BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default $OPENAI_BASE_URL, else OpenAI).",
    ),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help=f"Environment variable holding the endpoint's key (default {DEFAULT_KEY_ENV}; never printed or stored).",
    ),
]
