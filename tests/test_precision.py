"""torchcourse.precision: the autocast dtype and the GradScaler for each kind of device."""
from unittest.mock import patch

import pytest
import torch

from torchcourse.precision import autocast_settings


def on_gpu(device, bf16_cores):
    """autocast_settings(device) beside a CUDA GPU with or without bfloat16 tensor cores
    (without them it still emulates bfloat16, as a T4 does)."""
    def is_bf16_supported(including_emulation=True):
        return bf16_cores or including_emulation
    with patch("torch.cuda.is_available", return_value=True), \
         patch("torch.cuda.is_bf16_supported", side_effect=is_bf16_supported):
        return autocast_settings(device)


def test_cpu_uses_bfloat16_without_a_scaler():
    assert autocast_settings(torch.device("cpu")) == (torch.bfloat16, False)
    assert on_gpu("cpu", bf16_cores=False) == (torch.bfloat16, False)


@pytest.mark.parametrize("device", ["cuda", torch.device("cuda", 0)])
def test_cuda_with_bfloat16_tensor_cores_needs_no_scaler(device):
    assert on_gpu(device, bf16_cores=True) == (torch.bfloat16, False)


@pytest.mark.parametrize("device", ["cuda", torch.device("cuda", 0)])
def test_cuda_that_only_emulates_bfloat16_uses_float16_and_a_scaler(device):
    dtype, use_scaler = on_gpu(device, bf16_cores=False)
    assert (dtype, use_scaler) == (torch.float16, True)
    assert isinstance(use_scaler, bool)
