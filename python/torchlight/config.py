"""Options of to_edge and to_executorch (names follow ExecuTorch's)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

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
    # Upstream's field; our edge programs call ATen operators directly
    # (torchlight.exir.dialects._ops.ops.edge maps to them), so it has no effect.
    _use_edge_ops: bool = True
    # Operators that pass the core ATen check even though they are not core
    # (upstream's field): they are still decomposed when torch has a
    # decomposition, unlike preserve_ops.
    _core_aten_ops_exception_list: List[OpOverload] = field(default_factory=list)
    # Upstream's field; to_edge runs no type-promotion pass, so it has no effect.
    _skip_type_promotion: bool = False
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
    # Alignment of each constant inside the constant segment (None: 16, as
    # upstream's None means the schema's default).
    constant_tensor_alignment: Optional[int] = 16
    # Constants in a segment; False writes the legacy inline constant_buffer.
    extract_constants: bool = True
    # Delegate blobs in segments; False stores them inline in the flatbuffer.
    extract_delegate_segments: bool = True
    # Write the eh00 extended header (needed whenever there are segments).
    extended_header: bool = True
    # With alloc_graph_input=False: a FreeCall after each input's last use ends
    # the method's borrow of the caller's memory (set_input needed per run).
    free_unplanned_inputs: bool = False
    # Record each instruction's Python stack in Chain.stacktrace.
    emit_stacktrace: bool = False
    # torchao's decomposed 8da4w linears (torchlight.llm.quantize) become one
    # torchlight::linear_8da4w call on weights packed two a byte, pt2e int8
    # linears one torchlight::linear_qs8 call (int8 x int8), and int8
    # weight-only linears one torchlight::linear_int8 call, when the edge
    # program targets torchlight's kernels (passes/fuse_quantized_linear.py).
    fuse_quantized_linears: bool = True
    # Llama's RMSNorm chain (pow, mean, add, rsqrt, mul, mul) becomes one
    # torchlight::rms_norm call, x * sigmoid(x) one torchlight::silu call and
    # the rotary embedding chain one torchlight::rope call, for torchlight's
    # kernels (passes/fuse_llm_chains.py).
    fuse_llm_chains: bool = True
    # Fail when an operator has no kernel in the runtime build: True (the
    # kernel list must be found), False, or "auto" (check when a list is found).
    check_kernels: Union[bool, str] = "auto"
    # Where the runtime's kernel names are: a file with one name per line (as
    # the build writes to build/<cfg>/registered_kernels.txt), or the names.
    # Default: $TORCHLIGHT_KERNEL_LIST, then the build directories.
    kernel_list: Optional[Union[str, os.PathLike, Iterable[str]]] = None

    # --- Upstream's fields (torchlight.exir.passes has the pass classes) ---
    # Passes (upstream's PassType: a PassBase or a callable on the graph
    # module) run on each method's edge program first, in order; a dict gives
    # a list per method.
    passes: Union[List[Any], Dict[str, List[Any]]] = field(default_factory=list)
    # A MemoryPlanningPass, or a dict of them by method: when given, its
    # memory_planning_algo, alignment and alloc_graph_input/output replace
    # memory_planning, memory_alignment and alloc_graph_input/output above.
    memory_planning_pass: Optional[Union[Any, Dict[str, Any]]] = None
    # ToOutVarPass(): out-variant lowering always runs; accepted for upstream.
    to_out_var_pass: Optional[Any] = None
    # Dynamic dims are planned at their upper bound (upstream's UPPER_BOUND
    # mode and ConstraintBasedSymShapeEvalPass, its defaults); the other
    # choices (SYMBOLIC, HintBasedSymShapeEvalPass) raise in to_executorch.
    dynamic_memory_planning_mode: Optional[Any] = None
    sym_shape_eval_pass: Optional[Union[Any, Dict[str, Any]]] = None
    # Minimum alignment of delegate blobs: met when it divides
    # segment_alignment and blobs are extracted into segments.
    delegate_alignment: Optional[int] = None
    # Upstream's view_copy -> view lowering; False turns alias_views off too.
    remove_view_copy: bool = True
