"""Outside a terminal our scripts print no escape codes, including what Maven, pip and apt print through them.

Defect (issue 21): the README's first command, logged to a file, held Maven's colour resets
(``ESC[0m ESC[0m``): Maven 3.8's jansi writes them as it closes even in batch mode with
``-Dstyle.color=never``. ``scripts/_tools`` is how every script calls Maven, pip and apt.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._support import REPO

ESC = b"\x1b"


def through_a_pipe(script: str, tmp_path: Path) -> bytes:
    """``script`` run by bash in the checkout with scripts/_tools sourced, stdout and stderr a pipe."""
    done = subprocess.run(
        ["bash", "-c", f"source scripts/_tools\n{script}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
        timeout=600,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(Path.home())},
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("mvn") is None, reason="Maven (mvn) is not installed")
def test_maven_prints_no_colour_reset(tmp_path: Path) -> None:
    """The pinned Elasticsearch zip, resolved from the local repository (scripts/setup put it there)."""
    version = re.search(r'ELASTICSEARCH_VERSION = "(.+)"', (REPO / "indexer" / "_version.py").read_text())
    assert version is not None
    artifact = f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version.group(1)}:zip"
    out = through_a_pipe(f'mvn_get {artifact} "$HOME/.m2/repository" && echo resolved', tmp_path)
    assert out.rstrip().endswith(b"resolved"), out[-2000:]
    assert ESC not in out, out[-2000:]


def test_pip_prints_no_colour_when_piped(tmp_path: Path) -> None:
    out = through_a_pipe("python -m pip install --no-index r2med-no-such-package", tmp_path)
    assert b"ERROR" in out  # pip said something (and would colour it in a terminal)
    assert ESC not in out, out[-2000:]


def test_the_fetch_script_prints_no_escape_codes(tmp_path: Path) -> None:
    """scripts/fetch-elasticsearch into an empty cache folder, from the local Maven repository."""
    done = subprocess.run(
        ["bash", "scripts/fetch-elasticsearch"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "R2MED_HARNESS_CACHE": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "elasticsearch").is_dir() and ESC not in done.stdout
