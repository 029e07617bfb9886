"""The README's first command from a fresh clone and cold caches, phase by phase; then again, warm; then
the compose path (``docker compose up``, then ``harness run hybrid`` in the harness container).

    python bench/first_run.py                      # clone this checkout, cold, warm, compose (~10-20 min)
    python bench/first_run.py --repo /work/main    # another checkout (or branch: --rev)
    python bench/first_run.py --reference RUN_DIR  # also: are the metrics and TREC files those of RUN_DIR?
    python bench/first_run.py --no-compose         # without Docker

A benchmark, not a test: it prints figures and says which goal is met, never asserts. Stdlib only (it
runs before the clone has a virtualenv). What it does:

1. ``git clone`` the checkout into a temporary folder (``--workdir``; removed at the end unless ``--keep``);
2. with a temporary ``HOME`` (so ``~/.m2`` and ``~/.cache`` are empty: Maven, the harness's embedding
   cache and exported models start cold), ``XDG_CACHE_HOME``, ``R2MED_HARNESS_STATE`` and
   ``R2MED_HARNESS_CACHE``, and no pip cache (``PIP_NO_CACHE_DIR``, as ``scripts/setup`` sets), runs the
   README's line ``bash scripts/setup && .venv/bin/harness engine start && .venv/bin/harness run hybrid
   --dataset sample`` (the node on a free port, the run given ``--url`` for it);
3. runs the same line again (warm: everything installed, the node up, the index built, vectors cached);
4. stops the node;
5. the compose path, as its own column: the images built first (``scripts/build-es-image``,
   ``scripts/build-harness-image``; not timed: the goal is "images built"), then in a fresh copy of
   ``docker-compose.yml`` and ``docker/`` (no credentials, empty volumes) ``docker compose up -d`` (setup,
   Elasticsearch healthy, the harness container started) and ``docker compose exec harness harness run
   hybrid --dataset sample``, timed from the ``up``; then ``down -v``.

Where the figures come from: the phases of ``scripts/setup`` (system packages, python packages, the
Elasticsearch distribution) and of ``harness run`` (model load, embed, bulk, search, score, write, ...)
are what those commands report in the timing log (``R2MED_TIMING_LOG``: ``scripts/_tools`` ``timed``
for setup, :mod:`base._phases` for the run); ``engine start`` is the wall time of that command.
``run: other`` is the run's wall time less its reported phases (start-up, imports, connecting, planning,
verifying the index, ANN recall). Phases on other threads overlap the wall time: the engine's fetch runs
beside the Python packages (``scripts/setup``), and ranx's warm-up (its ``fuse`` and ``score``) beside the
index build and the searches (``harness/eval/_warm.py``), so a column's phases may add up to more than its
total, which is always wall time. Debian packages cannot be made cold on a shared machine: the
``system packages`` phase is warm when they are installed, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

COLD_GOAL_S = 300.0
WARM_GOAL_S = 20.0
COMPOSE_GOAL_S = 120.0
REPO = Path(__file__).resolve().parent.parent
#: the table's rows: (row, phases of the timing log that add up to it)
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("setup", ("system packages", "python packages (.venv, extras onnx,openvino)")),
    ("distribution fetch", ("elasticsearch distribution",)),
    ("engine start", ("engine start",)),
    ("compose up", ("compose up",)),
    ("model load", ("model load",)),
    ("vectors check", ("vectors check",)),
    ("embed", ("embed",)),
    ("bulk", ("bulk",)),
    ("search", ("search", "fuse")),
    ("score", ("score",)),
    ("write", ("write",)),
    ("run: start-up", ("start-up",)),
    ("run: index check", ("verify",)),
    ("run: ANN recall", ("ann recall",)),
)


@dataclass
class Pass:
    """One pass of the README's line: the reported phases (seconds) and each command's wall time."""

    name: str
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    walls: dict[str, float] = field(default_factory=dict)
    failed: str = ""

    def row(self, phases: tuple[str, ...]) -> float | None:
        found = [self.phases[p] for p in phases if p in self.phases]
        if not found and phases[0].startswith("python packages"):  # another extras list
            found = [v for k, v in self.phases.items() if k.startswith("python packages")]
        return sum(found) if found else None

    @property
    def total(self) -> float:
        return sum(self.walls.values())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cold_env(work: Path) -> dict[str, str]:
    """This process's environment with every cache and state folder empty, in ``work``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ES_URL")}
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        R2MED_HARNESS_STATE=str(work / "state"),
        R2MED_HARNESS_CACHE=str(work / "cache"),
        PIP_NO_CACHE_DIR="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        R2MED_DOCKER="off",
    )
    env.pop("MAVEN_REPO_LOCAL", None)  # ~/.m2 of the empty HOME
    return env


def run_step(name: str, cmd: list[str], cwd: Path, env: dict[str, str], log: Path, p: Pass) -> bool:
    """Run one command of the line, its output to ``log``; its wall time goes into ``p``."""
    print(f"[{p.name}] {name}: {' '.join(cmd)}", flush=True)
    started = time.perf_counter()
    with log.open("ab") as out:
        out.write(f"\n### {p.name} {name}: {' '.join(cmd)}\n".encode())
        out.flush()
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    p.walls[name] = time.perf_counter() - started
    print(f"[{p.name}] {name}: exit {done.returncode} after {p.walls[name]:.1f} s", flush=True)
    if done.returncode != 0:
        p.failed = f"{name} exited {done.returncode} (log: {log})"
    return done.returncode == 0


def read_timing(path: Path, into: Pass) -> None:
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            into.phases[row["phase"]] += float(row["seconds"])


def one_pass(name: str, clone: Path, work: Path, port: int) -> Pass:
    """The README's line once: setup, engine start, run (each reporting into its own timing log)."""
    p = Pass(name)
    env = cold_env(work)
    log = work / f"{name}.log"
    harness = str(clone / ".venv" / "bin" / "harness")
    run_dir = work / f"run-{name}"
    steps = (
        ("setup", ["bash", "scripts/setup"]),
        ("engine start", [harness, "engine", "start", "--name", "bench", "--port", str(port)]),
        ("run", [harness, "run", "hybrid", "--dataset", "sample", "--url", f"http://127.0.0.1:{port}",
                 "--output", str(run_dir)]),
    )  # fmt: skip
    for step, cmd in steps:
        timing = work / f"timing-{name}-{step.replace(' ', '-')}.jsonl"
        if not run_step(step, cmd, clone, {**env, "R2MED_TIMING_LOG": str(timing)}, log, p):
            break
        if step != "engine start":  # that command's wall time is its phase
            read_timing(timing, p)
    p.phases["engine start"] = p.walls.get("engine start", 0.0)
    if "run" in p.walls:
        reported = sum(v for k, v in p.phases.items() if not _is_setup(k) and k != "engine start")
        p.phases["run: other"] = max(0.0, p.walls["run"] - reported)
    return p


_SETUP_PHASES = {"system packages", "elasticsearch distribution"}


def _is_setup(phase: str) -> bool:
    return phase in _SETUP_PHASES or phase.startswith("python packages")


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def table(passes: list[Pass]) -> list[str]:
    head = f"{'phase':<22}" + "".join(f"{p.name + ' s':>12}" for p in passes)
    lines = [head, "-" * len(head)]
    shown: set[str] = set()
    for row, phases in ROWS:
        lines.append(f"{row:<22}" + "".join(f"{fmt(p.row(phases)):>12}" for p in passes))
        shown.update(phases)
    extra = sorted(
        {k for p in passes for k in p.phases if k not in shown and not _is_setup(k)} - {"run: other"}
    )
    for phase in (*extra, "run: other"):
        lines.append(f"{phase:<22}" + "".join(f"{fmt(p.phases.get(phase)):>12}" for p in passes))
    lines.append("-" * len(head))
    lines.append(f"{'total (wall)':<22}" + "".join(f"{p.total:>12.1f}" for p in passes))
    return lines


def compose_pass(clone: Path, work: Path) -> Pass:
    """The compose path: images built (untimed), then ``up -d`` and the run in the harness container, timed
    from the ``up``, in a fresh copy of the stack; ``down -v`` at the end."""
    p = Pass("compose")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ES_", "R2MED_"))}
    log = work / "compose.log"
    for script in ("build-es-image", "build-harness-image"):  # "images built": not part of the figure
        with log.open("ab") as out:
            built = subprocess.run(
                ["bash", f"scripts/{script}"], cwd=clone, stdout=out, stderr=out, check=False
            )
        if built.returncode != 0:
            p.failed = f"scripts/{script} exited {built.returncode} (log: {log})"
            return p
    stack = work / "stack"
    shutil.rmtree(stack, ignore_errors=True)  # a --keep run's copy: the compose path starts from a fresh one
    stack.mkdir()
    shutil.copy(clone / "docker-compose.yml", stack)
    shutil.copytree(clone / "docker", stack / "docker", ignore=shutil.ignore_patterns("credentials"))
    (stack / "docker" / "credentials").mkdir()
    version = (
        (clone / "indexer" / "_version.py").read_text().split('ELASTICSEARCH_VERSION = "')[1].split('"')[0]
    )
    env.update(ES_IMAGE=f"r2med/elasticsearch:{version}", ES_PORT=str(free_port()), ES_HEAP="512m")
    compose = ["docker", "compose"] if _has_compose_v2() else ["docker-compose"]
    compose += ["-p", "r2med-first-run"]
    timing = "/harness/runs/timing.jsonl"
    run = [*compose, "exec", "-T", "-e", f"R2MED_TIMING_LOG={timing}", "harness",
           "harness", "run", "hybrid", "--dataset", "sample"]  # fmt: skip
    try:
        if run_step("compose up", [*compose, "up", "-d"], stack, env, log, p):
            run_step("run", run, stack, env, log, p)
        read_timing(stack / "runs" / "timing.jsonl", p)
        p.phases["compose up"] = p.walls.get("compose up", 0.0)
        if "run" in p.walls:
            reported = sum(v for k, v in p.phases.items() if k != "compose up")
            p.phases["run: other"] = max(0.0, p.walls["run"] - reported)
    finally:
        subprocess.run([*compose, "down", "-v", "--remove-orphans"], cwd=stack, env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # fmt: skip
    return p


def _has_compose_v2() -> bool:
    return subprocess.run(["docker", "compose", "version"], capture_output=True, check=False).returncode == 0


def verdicts(cold: Pass | None, warm: Pass | None, compose: Pass | None = None) -> list[str]:
    out = []
    for p, goal in ((cold, COLD_GOAL_S), (warm, WARM_GOAL_S), (compose, COMPOSE_GOAL_S)):
        if p is None:
            continue
        met = "met" if p.total < goal and not p.failed else "NOT met"
        out.append(f"{p.name}: {p.total:.1f} s against a goal of {goal:.0f} s: {met}")
        if p.failed:
            out.append(f"  failed: {p.failed}")
        worst = sorted(((p.row(ph) or 0.0, row) for row, ph in ROWS), reverse=True)[:2]
        out.append(
            "  largest phases: "
            + ", ".join(f"{row} {s:.1f} s ({100 * s / p.total:.0f}%)" for s, row in worst)
        )
    return out


def compare(reference: Path, run_dir: Path) -> list[str]:
    """Are the run's metrics and TREC files those of ``reference``?"""
    if not (run_dir / "results.json").is_file():
        return [f"no results.json in {run_dir}"]
    ours, theirs = (json.loads((d / "results.json").read_text())["datasets"] for d in (run_dir, reference))
    same = all(
        ours[ds]["arms"][arm]["metrics"] == theirs[ds]["arms"][arm]["metrics"]
        for ds in theirs
        for arm in theirs[ds]["arms"]
    )
    trec = sorted(p.relative_to(reference) for p in (reference / "runs").rglob("*.trec"))
    differ = [str(t) for t in trec if (run_dir / t).read_bytes() != (reference / t).read_bytes()]
    return [
        f"metrics against {reference}: {'identical' if same else 'DIFFERENT'}",
        f"TREC files against {reference}: {len(trec) - len(differ)}/{len(trec)} identical"
        + (f" (different: {', '.join(differ)})" if differ else ""),
    ]


def run_dir(work: Path, name: str) -> Path:
    """Where a pass wrote its run: ``run-NAME``, or for the compose path the stack's ``runs/`` (the
    container's default run directory, ``MODE-HASH``)."""
    if name == "compose":
        found = sorted((work / "stack" / "runs").glob("hybrid-*"))
        return found[-1] if found else work / "stack" / "runs"
    return work / f"run-{name}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="checkout to clone (default: this one)")
    ap.add_argument("--rev", default=None, help="branch or commit to check out after cloning")
    ap.add_argument(
        "--workdir", type=Path, default=None, help="where to clone (default: a new temporary folder)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the clone, its venv and the run directories")
    ap.add_argument("--no-warm", action="store_true", help="only the cold pass")
    ap.add_argument("--no-compose", action="store_true", help="leave the compose path out (no Docker)")
    ap.add_argument(
        "--warm-only",
        action="store_true",
        help="only the warm pass, in the clone a --keep run left in --workdir (updated from --repo first)",
    )
    ap.add_argument(
        "--reference", type=Path, default=None, help="a run directory of the same command to compare with"
    )
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="r2med-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "clone"
    print(f"first_run: {os.cpu_count()} CPUs, load average {os.getloadavg()}, work folder {work}", flush=True)
    if args.warm_only:
        subprocess.run(["git", "-C", str(clone), "pull", "--quiet", str(args.repo)], check=True)
    else:
        subprocess.run(["git", "clone", "--quiet", str(args.repo), str(clone)], check=True)
    if args.rev:
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", args.rev], check=True)
    sha = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    print(f"first_run: cloned {args.repo} at {sha.stdout.strip()}", flush=True)
    port = free_port()
    passes = [] if args.warm_only else [one_pass("cold", clone, work, port)]
    if not args.no_warm and not (passes and passes[0].failed):
        passes.append(one_pass("warm", clone, work, port))
    if not args.no_compose and not any(p.failed for p in passes) and shutil.which("docker"):
        passes.append(compose_pass(clone, work))
    harness = clone / ".venv" / "bin" / "harness"
    if harness.exists():
        subprocess.run([str(harness), "engine", "stop", "--name", "bench"], env=cold_env(work), check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # fmt: skip
    venv = clone / ".venv"
    size = subprocess.run(["du", "-sh", str(venv)], capture_output=True, text=True).stdout.split("\t")[0]
    cold = next((p for p in passes if p.name == "cold"), None)
    warm = next((p for p in passes if p.name == "warm"), None)
    composed = next((p for p in passes if p.name == "compose"), None)
    load = os.getloadavg()
    print("\n".join(["", *table(passes), "", *verdicts(cold, warm, composed)]))
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} CPUs)")
    print(f"venv: {size or '–'}; system packages: warm when installed (not removed on a shared machine)")
    if args.reference is not None:
        for p in passes:
            print("\n".join(f"{p.name}: {line}" for line in compare(args.reference, run_dir(work, p.name))))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept: {work}")
    return 0 if not any(p.failed for p in passes) else 1


if __name__ == "__main__":
    sys.exit(main())
