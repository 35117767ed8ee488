"""LLM weight quantization as source transforms: the modes upstream
ExecuTorch's LLM export offers (`-qmode`, `-G`, `-E`), on our GPT and Llama
or any nn.Module with linears and embeddings.

    from torchlight.llm.quantize import quantize_model
    skipped = quantize_model(model, qmode="8da4w", group_size=128, embedding="4,32")
    ep = export_llm(model)          # then to_edge / to_executorch as for float

Every nn.Linear is replaced by a module whose forward calls PyTorch's
quantized_decomposed operators, so the exported graph names upstream's
operators (torchlight.kernels.quantized registers their out variants):

  8da4w  int8 dynamic per-token asymmetric activations, int4 group-wise
         symmetric weights (the graph torchao's Int8DynActInt4WeightLinear
         exports):
           choose_qparams_per_token_asymmetric -> quantize_per_token ->
           dequantize_per_token -> linear <- dequantize_per_channel_group(weight)
  int8   weight-only, per output channel, symmetric:
           linear(x, dequantize_per_channel(weight, axis 0))
  4w     weight-only, int4 group-wise symmetric:
           linear(x, dequantize_per_channel_group(weight))

Weights are int8 tensors ([out, in], 4-bit values in -8..7, one per byte, as
torchao stores them for 8da4w); scales are float32, [out] or
[out, in / group]; zero points are zeros ([out] int64 per channel, float32
per group, as torchao writes them). A linear whose input width is not a
multiple of the group size stays float; quantize_model returns its name.

Embedding quantization (`embedding="bits,group"`, group 0 = one group per
row) replaces every nn.Embedding: 8 bits calls embedding_byte on an int8
table, 4 bits embedding_4bit on upstream's packed layout (two values per
uint8 byte, element 2i in the high nibble, each stored + 8), 2 bits
embedding_2bit (four per byte, element 4i+j in bits 2j..2j+1, stored + 2).
Both are symmetric with float32 scales [rows] or [rows, dim / group] and no
zero points.

A tied classifier (GPT's lm_head, Llama's output sharing the embedding
table) is quantized as a linear and the table as an embedding: the tie is
broken, each keeps its own copy.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

import torchlight.kernels.quantized  # noqa: F401  (defines embedding_* and out variants)

qd = torch.ops.quantized_decomposed

QMODES = ("8da4w", "int8", "4w")
GROUP_SIZES = (32, 64, 128, 256)
EMBEDDING_BITS = (8, 4, 2)


# --- Weight quantizers ------------------------------------------------------------------


def quantize_symmetric(weight: torch.Tensor, bits: int, group_size: int = 0) \
        -> Tuple[torch.Tensor, torch.Tensor]:
    """(values int8 [rows, cols] in [-2^(bits-1), 2^(bits-1) - 1], scales
    float32 [rows] (group_size 0: one group per row) or [rows, cols / group]).

    Symmetric, as torchao's group_quantize_tensor_symmetric: scale =
    max|w| / ((qmax - qmin) / 2) per group, values round(w / scale) clamped.
    """
    rows, cols = weight.shape
    group = group_size or cols
    if cols % group:
        raise ValueError(f"width {cols} is not a multiple of the group size {group}")
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    w = weight.detach().to(torch.float32).reshape(rows, cols // group, group)
    scales = w.abs().amax(dim=-1) / ((qmax - qmin) / 2)
    scales = scales.clamp(min=torch.finfo(torch.float32).eps)
    values = torch.round(w / scales.unsqueeze(-1)).clamp(qmin, qmax).to(torch.int8)
    values = values.reshape(rows, cols)
    return values, (scales.reshape(rows) if group_size == 0 else scales)


def pack_embedding_weight(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Upstream's packed layout for embedding_4bit / embedding_2bit (see the
    module doc); 8 bits is returned as it is."""
    if bits == 8:
        return values
    per_byte = 8 // bits
    rows, cols = values.shape
    if cols % per_byte:
        raise ValueError(f"embedding width {cols} is not a multiple of {per_byte} "
                         f"({bits}-bit packing)")
    shifted = (values.to(torch.int16) + (1 << (bits - 1))).reshape(rows, cols // per_byte,
                                                                    per_byte)
    if bits == 4:
        packed = (shifted[..., 0] << 4) | shifted[..., 1]
    else:
        packed = sum(shifted[..., j] << (2 * j) for j in range(per_byte))
    return packed.to(torch.uint8)


# --- Quantized modules ------------------------------------------------------------------


class _QuantizedLinear(nn.Module):
    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        if linear.bias is not None:
            self.register_buffer("bias", linear.bias.detach().clone())
        else:
            self.bias = None


class _GroupwiseInt4Linear(_QuantizedLinear):
    """Int4 group-wise symmetric weights, as 8da4w and 4w store them."""

    def __init__(self, linear: nn.Linear, group_size: int):
        super().__init__(linear)
        self.group_size = group_size
        values, scales = quantize_symmetric(linear.weight, 4, group_size)
        self.register_buffer("weight", values)                      # [out, in] int8 in -8..7
        self.register_buffer("scales", scales)                      # [out, in / group]
        self.register_buffer("zeros", torch.zeros_like(scales))     # [out, in / group]

    def dequantized_weight(self, dtype: torch.dtype) -> torch.Tensor:
        return qd.dequantize_per_channel_group(self.weight, self.scales, self.zeros, -8, 7,
                                               torch.int8, self.group_size, dtype)


class Int8DynActInt4WeightLinear(_GroupwiseInt4Linear):
    """8da4w: per-token int8 activations, int4 group-wise symmetric weights."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scales, zero_points = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        xq = qd.quantize_per_token(x, scales, zero_points, -128, 127, torch.int8)
        xdq = qd.dequantize_per_token(xq, scales, zero_points, -128, 127, torch.int8, x.dtype)
        return F.linear(xdq, self.dequantized_weight(x.dtype), self.bias)


class Int8WeightOnlyLinear(_QuantizedLinear):
    """int8: weight-only, per output channel, symmetric."""

    def __init__(self, linear: nn.Linear):
        super().__init__(linear)
        values, scales = quantize_symmetric(linear.weight, 8)
        self.register_buffer("weight", values)                                   # [out, in]
        self.register_buffer("scales", scales)                                   # [out]
        self.register_buffer("zeros", torch.zeros(scales.shape, dtype=torch.int64))  # [out]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = qd.dequantize_per_channel(self.weight, self.scales, self.zeros, 0, -128, 127,
                                      torch.int8, out_dtype=x.dtype)
        return F.linear(x, w, self.bias)


class Int4WeightOnlyLinear(_GroupwiseInt4Linear):
    """4w: weight-only, int4 group-wise symmetric."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.dequantized_weight(x.dtype), self.bias)


class QuantizedEmbedding(nn.Module):
    """An embedding table of `bits`-bit symmetric values (see the module doc)."""

    def __init__(self, embedding: nn.Embedding, bits: int, group_size: int = 0):
        super().__init__()
        if bits not in EMBEDDING_BITS:
            raise ValueError(f"embedding quantization to {bits} bits; supported: 8, 4, 2")
        self.bits = bits
        self.group_size = group_size
        self.num_embeddings, self.embedding_dim = embedding.weight.shape
        values, scales = quantize_symmetric(embedding.weight, bits, group_size)
        self.register_buffer("weight", pack_embedding_weight(values, bits))  # [rows, dim*bits/8]
        self.register_buffer("scales", scales)                  # [rows] or [rows, dim / group]

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        qmax = (1 << (self.bits - 1)) - 1
        op = {8: qd.embedding_byte, 4: qd.embedding_4bit, 2: qd.embedding_2bit}[self.bits]
        return op(self.weight, self.scales, None, -qmax - 1, qmax, indices)


# --- The transform ------------------------------------------------------------------------


def parse_embedding_spec(spec: Optional[str]) -> Optional[Tuple[int, int]]:
    """"4,32" -> (4, 32); "8" -> (8, 0); None/"" -> None. Raises ValueError."""
    if not spec:
        return None
    parts = str(spec).split(",")
    try:
        bits = int(parts[0])
        group = int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise ValueError(f"embedding quantization {spec!r}: expected 'bits,group' such as "
                         f"'8,0' or '4,32'") from None
    if bits not in EMBEDDING_BITS or group < 0 or len(parts) > 2:
        raise ValueError(f"embedding quantization {spec!r}: bits must be 8, 4 or 2 and the "
                         f"group size >= 0 (0: one group per row)")
    return bits, group


def _replace(model: nn.Module, name: str, new: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, new)


@torch.no_grad()
def quantize_model(model: nn.Module, qmode: Optional[str] = None, group_size: int = 128,
                   embedding: Optional[str] = None) -> List[str]:
    """Replaces, in place, every nn.Linear per `qmode` ("8da4w", "int8",
    "4w" or None) and every nn.Embedding per `embedding` ("bits,group" or
    None). Returns the names of linears left float because their input width
    is not a multiple of `group_size`. Raises ValueError for an unknown mode,
    a group size other than 32/64/128/256 for the group-wise modes, or an
    embedding spec that cannot be applied."""
    if qmode is not None and qmode not in QMODES:
        raise ValueError(f"unknown quantization mode {qmode!r}; known: {', '.join(QMODES)}")
    if qmode in ("8da4w", "4w") and group_size not in GROUP_SIZES:
        raise ValueError(f"group size {group_size} for {qmode}; supported: "
                         f"{', '.join(map(str, GROUP_SIZES))}")
    embedding_spec = parse_embedding_spec(embedding)
    skipped: List[str] = []
    modules = list(model.named_modules())
    for name, module in modules:
        if isinstance(module, nn.Linear) and qmode is not None:
            if qmode == "int8":
                _replace(model, name, Int8WeightOnlyLinear(module))
            elif module.in_features % group_size:
                skipped.append(name)
            elif qmode == "8da4w":
                _replace(model, name, Int8DynActInt4WeightLinear(module, group_size))
            else:
                _replace(model, name, Int4WeightOnlyLinear(module, group_size))
        elif isinstance(module, nn.Embedding) and embedding_spec is not None:
            bits, group = embedding_spec
            _replace(model, name, QuantizedEmbedding(module, bits, group))
    return skipped
