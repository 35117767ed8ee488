"""Options of to_edge and to_executorch (names follow ExecuTorch's)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import torch
from torch._ops import OpOverload

# Operators to_edge keeps whole unless told otherwise:
#  - aten::linear: core ATen decomposes nn.Linear into
#    addmm(bias, x, permute_copy(weight)), and a .pte has no views, so every
#    call would copy every weight matrix transposed before multiplying (for
#    an LLM decode step that copy costs as much as the product itself). Kept
#    whole it lowers to aten::linear.out, whose kernels read the weight in
#    its stored [N, K] layout.
DEFAULT_PRESERVE_OPS: Sequence[OpOverload] = (torch.ops.aten.linear.default,)


@dataclass
class EdgeCompileConfig:
    # Check that every ATen operator is core ATen after decomposition.
    _check_ir_validity: bool = True
    # Operators kept as they are instead of decomposed (e.g. because a
    # backend or a kernel library implements them directly). Replaces the
    # default: pass () to decompose everything (nn.Linear then becomes
    # permute_copy + addmm/mm), or [*DEFAULT_PRESERVE_OPS, op] to add one.
    preserve_ops: Sequence[OpOverload] = DEFAULT_PRESERVE_OPS
    # Keep aten::_to_copy and aten::empty.memory_format instead of their
    # dim_order_ops forms (_to_dim_order_copy, _empty_dim_order). False, the
    # default, writes what upstream's to_edge writes by default; True gives
    # the aten forms, as our exporter wrote before.
    _skip_dim_order: bool = False
    # The kernel library the program must run on: "torchlight" (this
    # runtime), "executorch-portable", "executorch-optimized" or
    # "executorch-quantized" (portable plus the quantized library) (upstream
    # release 0.5's lists, python/torchlight/kernel_targets/). Preserved
    # operators the target has no kernel for are decomposed, and
    # to_executorch's kernel check uses the target's list.
    kernel_target: str = "torchlight"


@dataclass
class ExecutorchBackendConfig:
    # Memory planning: "greedy" (lifetime-based reuse) or "naive" (no reuse).
    memory_planning: str = "greedy"
    # Alignment, in bytes, of every planned tensor's offset and size.
    memory_alignment: int = 16
    # Views of planned intermediates (reshapes, outer selects/slices) share
    # their base's bytes instead of copying them (passes/alias_views.py).
    alias_views: bool = True
    # Plan the method's input tensors (set_input copies into the arena); when
    # False the caller's memory is used directly.
    alloc_graph_input: bool = True
    # Plan the method's output tensors; when False the caller binds memory
    # with set_output_data_ptr before executing.
    alloc_graph_output: bool = True
    # Alignment of segments in the file (4096 makes them mmap-able).
    segment_alignment: int = 128
    # Alignment of each constant inside the constant segment.
    constant_tensor_alignment: int = 16
    # Constants in a segment; False writes the legacy inline constant_buffer.
    extract_constants: bool = True
    # Delegate blobs in segments; False stores them inline in the flatbuffer.
    extract_delegate_segments: bool = True
    # Write the eh00 extended header (needed whenever there are segments).
    extended_header: bool = True
    # With alloc_graph_input=False: a FreeCall after each input's last use ends
    # the method's borrow of the caller's memory (set_input needed per run).
    free_unplanned_inputs: bool = False
    # Rewrite quantized LLM linears (8da4w, int8 weight-only) into the fused
    # torchlight::linear_8da4w / linear_int8 kernels
    # (passes/fuse_quantized_linears.py); False keeps the decomposed graph.
    fuse_quantized_linears: bool = True
    # Record each instruction's Python stack in Chain.stacktrace.
    emit_stacktrace: bool = False
    # Fail when an operator has no kernel in the runtime build: True (the
    # kernel list must be found), False, or "auto" (check when a list is found).
    check_kernels: Union[bool, str] = "auto"
    # Where the runtime's kernel names are: a file with one name per line (as
    # the build writes to build/<cfg>/registered_kernels.txt), or the names.
    # Default: $TORCHLIGHT_KERNEL_LIST, then the build directories.
    kernel_list: Optional[Union[str, os.PathLike, Iterable[str]]] = None
