"""Which dtype autocast should use on a device, and whether it needs a GradScaler (chapter 09).

Chapter 09 has students write `autocast_settings`; its training demonstration imports this copy.

| device                                                        | autocast dtype | GradScaler |
|---------------------------------------------------------------|----------------|------------|
| CUDA GPU with bfloat16 tensor cores (Ampere or later: A100, H100) | bfloat16   | no: bfloat16 has float32's range |
| older CUDA GPU (T4: Turing, the oldest the pinned wheel runs) | float16        | yes: float16 underflows small gradients |
| anything else (the CPU)                                       | bfloat16       | no         |

`torch.cuda.is_bf16_supported()` on its own also says True on a T4, which can store
bfloat16 tensors (emulation) but have no bfloat16 tensor cores: ask with
`including_emulation=False`.
"""
import torch


def autocast_settings(device) -> tuple:
    """`(dtype, use_scaler)` for `torch.autocast` and `torch.amp.GradScaler` on `device`."""
    if torch.device(device).type == "cuda":
        if torch.cuda.is_bf16_supported(including_emulation=False):
            return torch.bfloat16, False
        return torch.float16, True
    return torch.bfloat16, False
