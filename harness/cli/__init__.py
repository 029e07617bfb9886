"""The ``harness`` command line: a thin edge over the packages.

Each command group lives in its own module and registers itself on ``app``
through :data:`COMMAND_MODULES`; the CLI only parses flags, builds typed
config once, calls into the packages and maps :class:`HarnessError` to a
clear message and a non-zero exit.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from base import HarnessError, record_startup

app = typer.Typer(
    name="harness",
    help="R2MED retrieval harness: lexical, vector and hybrid retrieval in Elasticsearch or OpenSearch, scored with ranx.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

err_console = Console(stderr=True, soft_wrap=True)

# Modules under harness.cli that define ``register(app)``; order = help order.
COMMAND_MODULES: tuple[str, ...] = (
    "_run",
    "_compare",
    "_score",
    "_index",
    "_expand",
    "_datasets",
    "_engine",
    "_report",
    "_gate",
    "_judgments",
    "_clicks",
    "_judge",
    "_kibana",
)


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"harness.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"harness.cli.{name}":
                continue  # command group not built yet
            raise
        module.register(app)


_load_commands()


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def interruptible() -> dict[signal.Signals, Any]:
    """Ctrl-C (SIGINT) and SIGTERM stop the command cleanly, also when it was started in the background.

    A shell starts background jobs with SIGINT ignored, and Python keeps it ignored: without
    this, ``kill -INT`` (or a CI system cancelling a job) would be lost and the command would
    run to its end. SIGTERM gets the same clean stop (exit 130, "run again to resume").
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the process exit code."""
    record_startup()  # a timing phase (R2MED_TIMING_LOG): what the interpreter and the imports took
    previous = interruptible()
    try:
        return _main(argv)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _main(argv: list[str] | None) -> int:
    try:
        result = app(args=argv, standalone_mode=False, prog_name="harness")
        if result == 130:  # typer turns Ctrl-C into Exit(130) outside standalone mode
            err_console.print(
                "[bold red]interrupted[/]: nothing half-done is published; run the same command again to resume"
            )
        if isinstance(result, int):
            return result
    except HarnessError as exc:
        err_console.print(Text.assemble(("error: ", "bold red"), str(exc)), highlight=False, soft_wrap=True)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except KeyboardInterrupt:
        err_console.print(
            "[bold red]interrupted[/]: nothing half-done is published; run the same command again to resume"
        )
        return 130
    except Exception as exc:  # click's usage errors (typer may vendor its own click: match by shape)
        show = getattr(exc, "show", None)
        if callable(show) and isinstance(getattr(exc, "exit_code", None), int):
            show()
            return int(exc.exit_code)  # type: ignore[attr-defined]
        if type(exc).__name__ == "Abort":
            err_console.print("[bold red]aborted[/]")
            return 130
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
