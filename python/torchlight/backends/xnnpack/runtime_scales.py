"""What an XNNPACK-delegated 8da4w model computes, as a PyTorch model.

XNNPACK's block-wise 4-bit fully-connected node takes its scales in bf16:
upstream's 0.5 runtime (and ours, backends/xnnpack) converts the payload's
fp32 scales by multiplying by 1.00389105 and keeping the top 16 bits
(../shared/spec/xnnpack-format.md). Comparing a delegated program against
eager PyTorch therefore needs the model with those scales; against the exact
fp32 scales the difference is the bf16 rounding, not an error.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

BF16_ROUNDING_FACTOR = 1.00389105


def xnnpack_block_scales(scales: torch.Tensor) -> torch.Tensor:
    """`scales` (float32) as the XNNPACK runtime hands them to XNNPACK."""
    bits = (scales.to(torch.float32) * BF16_ROUNDING_FACTOR).view(torch.int32) & ~0xFFFF
    return bits.view(torch.float32)


def as_xnnpack_computes(model: nn.Module) -> nn.Module:
    """A copy of `model` whose 8da4w linears that lower to XNNPACK's
    block-wise node (group sizes that are multiples of 32) carry the scales
    XNNPACK uses; other linears are unchanged."""
    from torchlight.llm.quantize import Int8DynActInt4WeightLinear

    model = copy.deepcopy(model)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, Int8DynActInt4WeightLinear) and module.group_size % 32 == 0:
                module.scales.copy_(xnnpack_block_scales(module.scales))
    return model
