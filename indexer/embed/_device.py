"""Choosing the torch device for the embedding model: cuda, then mps, then cpu."""

from __future__ import annotations

import re

from base import ConfigError

_DEVICE_PATTERN = re.compile(r"(cpu|mps|cuda(:\d+)?)")
AUTO_ORDER: tuple[str, ...] = ("cuda", "mps", "cpu")


def choose_device(available: dict[str, bool], preferred: str | None = None) -> str:
    """Pick a device from what is ``available`` (``{"cuda": bool, "mps": bool}``; cpu always is).

    With ``preferred`` (``"cpu"``, ``"mps"``, ``"cuda"`` or ``"cuda:N"``) that
    device is used if available, otherwise :class:`ConfigError`. Without it the
    first available of :data:`AUTO_ORDER` wins.
    """
    if preferred is None or preferred == "auto":
        return next(d for d in AUTO_ORDER if d == "cpu" or available.get(d, False))
    wanted = preferred.strip().lower()
    if not _DEVICE_PATTERN.fullmatch(wanted):
        raise ConfigError(f"unknown device {preferred!r}: expected auto, cpu, mps, cuda or cuda:N")
    kind = wanted.split(":", 1)[0]
    if kind != "cpu" and not available.get(kind, False):
        found = ", ".join(d for d in AUTO_ORDER if d == "cpu" or available.get(d, False))
        raise ConfigError(
            f"device {preferred!r} was requested but is not available here (available: {found})"
        )
    return wanted


def available_devices() -> dict[str, bool]:
    """What torch can use on this machine."""
    import torch

    mps = getattr(torch.backends, "mps", None)
    return {
        "cuda": bool(torch.cuda.is_available()),
        "mps": bool(mps is not None and mps.is_available()),
        "cpu": True,
    }


def select_device(preferred: str | None = None) -> str:
    """The device to run on: ``preferred`` if given (and available), else cuda, then mps, then cpu."""
    return choose_device(available_devices(), preferred)
