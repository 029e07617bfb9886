"""``LoadOptions``: how a load phase drives the engine, validated once (Rally's task parameters)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.results import LoadSettings

#: the backends' HTTP connection pools hold 10 connections per node: more clients would queue in the client
MAX_CLIENTS = 10
DEFAULT_DURATION_S = 10.0
DEFAULT_WARMUP_S = 2.0


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """``clients`` threads, each sending one search at a time.

    Bounded by ``duration_s`` (seconds of measurement after ``warmup_s``) or by ``iterations``
    (passes over the operation's queries after the warm-up; exactly ``iterations x queries``
    measured requests). With ``target_throughput`` (requests per second, all clients together)
    every request has a scheduled start and its latency is measured from it, as Rally does;
    without it the clients send back to back and latency equals service time. A request gets
    ``timeout_s`` to answer before it counts as an error, so a load phase always ends.
    """

    clients: int = 1
    duration_s: float | None = None
    iterations: int | None = None
    target_throughput: float | None = None
    warmup_s: float = DEFAULT_WARMUP_S
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        # (the values are checked as keys, load.*: harness.experiment's LoadTable)
        if self.duration_s is None and self.iterations is None:
            object.__setattr__(self, "duration_s", DEFAULT_DURATION_S)

    @property
    def interval_s(self) -> float | None:
        """Seconds between two scheduled starts of one client (None: back to back)."""
        return self.clients / self.target_throughput if self.target_throughput else None

    def settings(self) -> LoadSettings:
        """The typed record of these options (the run manifest keeps it)."""
        return LoadSettings(
            self.clients,
            self.duration_s,
            self.iterations,
            self.target_throughput,
            self.warmup_s,
            self.timeout_s,
        )

    def describe(self) -> str:
        bound = f"{self.duration_s:g} s" if self.duration_s is not None else f"{self.iterations} iteration(s)"
        rate = f", target {self.target_throughput:g} req/s" if self.target_throughput else ""
        return f"{self.clients} client(s), {bound} after {self.warmup_s:g} s warm-up{rate}"
