"""The values that snippet answers state in their comments are the values they produce
(pt, prec, sys topics)."""

from __future__ import annotations

import pytest
import torch

from tests.bank_code.blocks import load_block


def test_fp16_accumulation_loses_what_the_card_says() -> None:
    ns = load_block("prec-fp32-accumulation-low-precision-gemm", 0)
    exact = ns["exact"].item()
    assert round(exact, 2) == 2583.20 and round(ns["acc32"].item(), 2) == 2583.21
    assert ns["acc16"].item() == 2304.0
    assert round((ns["acc16"].item() - exact) / exact * 100, 1) == -10.8


def test_expand_aliases_and_repeat_copies() -> None:
    ns = load_block("pt-repeat-vs-expand", 0)
    assert ns["e"].stride() == (1, 0) and ns["e"].data_ptr() == ns["x"].data_ptr()
    assert ns["r"].is_contiguous() and ns["r"].data_ptr() != ns["x"].data_ptr()
    assert torch.tensor([1, 2]).repeat(2).tolist() == [1, 2, 1, 2]
    assert torch.tensor([1, 2]).repeat_interleave(2).tolist() == [1, 1, 2, 2]


def test_gradients_accumulate_and_double_backward() -> None:
    ns = load_block("pt-autograd-backward-engine", 0)
    assert ns["g"].tolist() == [3.0, 3.0] and ns["w"].grad.tolist() == [6.0, 6.0]


def test_device_agnostic_forward_runs_on_the_cpu() -> None:
    ns = load_block("pt-device-agnostic-code", 0)
    assert ns["y"].shape == (8, 1024) and ns["y"].dtype == torch.bfloat16


@pytest.mark.parametrize("name", ["a", "b"])
def test_shallow_copy_shares_the_inner_lists(name: str) -> None:
    ns = load_block("sys-python-decorators-imports-copy", 1)
    assert ns[name] == [[1, 2, 9], [3]] and ns["a"] is not ns["b"] and ns["a"][0] is ns["b"][0]
