"""Where expansion sets live besides the dataset folder.

Datasets that are not a folder of the user's (the bundled sample, a hub snapshot in the Hugging
Face cache) cannot take new files; ``harness expand`` writes their expansion sets under
``$R2MED_EXPANSIONS_DIR/<dataset slug>/<method>/<llm>/query_with_hydoc.jsonl`` instead (default:
the harness state folder's ``expansions/``), and loading those datasets reads them from there too.
A folder dataset keeps its expansion sets inside itself, as R2MED's layout does.
"""

from __future__ import annotations

import re
from pathlib import Path

from base import default_state_dir, from_env, variable

EXPANSIONS_ENV = variable("data.expansions_dir")


def expansions_home() -> Path:
    value = from_env("data").get("expansions_dir")
    return Path(value).expanduser() if value else default_state_dir() / "expansions"


def overlay_root(dataset_name: str) -> Path:
    """The folder holding ``<method>/<llm>/`` expansion sets for the named dataset ``dataset_name``."""
    slug = re.sub(r"[^a-z0-9]+", "-", dataset_name.lower()).strip("-") or "dataset"
    return expansions_home() / slug
