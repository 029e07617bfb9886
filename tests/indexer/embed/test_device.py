from __future__ import annotations

from typing import Any

import pytest

from base import ConfigError
from indexer.embed import available_devices, choose_device, select_device


@pytest.mark.parametrize(
    ("cuda", "mps", "expected"),
    [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")],
)
def test_automatic_order_is_cuda_then_mps_then_cpu(cuda: bool, mps: bool, expected: str) -> None:
    assert choose_device({"cuda": cuda, "mps": mps}) == expected
    assert choose_device({"cuda": cuda, "mps": mps}, "auto") == expected


def test_preferred_device_is_used_when_available() -> None:
    assert choose_device({"cuda": True, "mps": False}, "cpu") == "cpu"
    assert choose_device({"cuda": True, "mps": False}, "CUDA:1") == "cuda:1"
    assert choose_device({"cuda": False, "mps": True}, "mps") == "mps"


def test_unavailable_or_unknown_device_is_a_config_error() -> None:
    with pytest.raises(
        ConfigError, match=r"'cuda' was requested but is not available here \(available: cpu\)"
    ):
        choose_device({"cuda": False, "mps": False}, "cuda")
    with pytest.raises(ConfigError, match="unknown device 'tpu'"):
        choose_device({"cuda": True, "mps": True}, "tpu")


def test_select_device_reflects_this_machine(model_runtime: Any) -> None:
    torch = model_runtime
    available = available_devices()
    assert available["cuda"] == torch.cuda.is_available()
    assert available["cpu"]
    assert select_device() == choose_device(available)
    assert select_device("cpu") == "cpu"
    if torch.cuda.is_available():
        assert select_device() == "cuda"
