"""What the XNNPACK delegate can run: per operator, the constraints
upstream's partitioner configs (release 0.5) apply, each failure a reason.

`unsupported_reason(node, constants)` returns None when the node can be
delegated, else a sentence saying why not (the partitioner's verbose mode
prints it with the node's name). `constants` maps the placeholders that
hold parameters, buffers or lifted constants to their values: XNNPACK needs
convolution and linear weights to be constants it can pack.

Dynamic dims are delegated when the exported program bounds them (the
payload holds the bound; the runtime reshapes on every call), except where
XNNPACK's node fixes sizes at export (slice, pad, convolution, pooling, ...).
"""

from __future__ import annotations

import math
import operator
from typing import Callable, Dict, Optional, Set

import sympy
import torch
import torch.fx

from torchlight.backends.xnnpack import quant

aten = torch.ops.aten

MAX_DIMS = 6
FLOAT_DTYPES = (torch.float32,)


def _val(value):
    return value.meta.get("val") if isinstance(value, torch.fx.Node) else None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Largest upper bound a dynamic dim may have (XNNPACK dims are size_t, the
# payload's are uint32).
MAX_BOUND = 2 ** 31 - 1


def upper_bound(size) -> Optional[int]:
    """A static size as it is; the upper bound of a symbolic one (the
    exported program's range constraints, which its shape env keeps); None
    for a symbolic size without a finite bound."""
    if isinstance(size, int):
        return size
    node = getattr(size, "node", None)
    env = getattr(node, "shape_env", None)
    if env is None:
        return None
    try:
        upper = env.bound_sympy(node.expr).upper
    except Exception:  # noqa: BLE001  (an expression sympy cannot bound)
        return None
    if not isinstance(upper, sympy.Integer):  # int_oo: no bound was given
        return None
    upper = int(upper)
    return upper if 0 < upper <= MAX_BOUND else None


def is_dynamic(size) -> bool:
    return not isinstance(size, int)


def tensor_reason(value, what: str) -> Optional[str]:
    """Why `value` (a node) cannot be an XNNPACK fp32 tensor, if it cannot.
    A dynamic dim is fine when it has an upper bound: the payload gives the
    bound and the runtime reshapes to the actual size on every call."""
    val = _val(value)
    if not isinstance(val, torch.Tensor):
        return f"{what} is not a tensor"
    if val.dtype not in FLOAT_DTYPES and not quant.is_quantized_value(value):
        return f"{what} has dtype {val.dtype}; XNNPACK takes float32 here"
    if val.dim() > MAX_DIMS:
        return f"{what} has {val.dim()} dims; XNNPACK takes at most {MAX_DIMS}"
    for i, size in enumerate(val.shape):
        if is_dynamic(size):
            if upper_bound(size) is None:
                return (f"{what} has a dynamic dim {i} ({size}) with no upper bound; XNNPACK "
                        f"needs one (give the export's Dim a max)")
        elif size == 0:
            return f"{what} is empty (dim {i} is 0)"
    return None


def static_reason(value, what: str) -> Optional[str]:
    """tensor_reason, and no dynamic dims at all (operators whose XNNPACK node
    takes sizes fixed at export: slice, pad, convolution, pooling, ...)."""
    reason = tensor_reason(value, what)
    if reason:
        return reason
    for i, size in enumerate(_val(value).shape):
        if is_dynamic(size):
            return (f"{what} has a dynamic dim {i} ({size}); this operator is only delegated "
                    f"with static shapes")
    return None


def _constant(value, constants: Set[str]) -> bool:
    """A parameter/buffer/lifted constant, possibly through q/dq or a view
    of one (folded at preprocess time)."""
    if not isinstance(value, torch.fx.Node):
        return False
    if value.op == "get_attr":
        return True
    if value.op == "placeholder":
        return value.name in constants
    if value.op == "call_function" and value.target in _FOLDABLE and value.args:
        return _constant(value.args[0], constants)
    if value.op == "call_function" and value.target in quant.DEQUANTIZE and value.args:
        return quant.unsupported_reason(value, constants) is None and \
            quant.is_constant_node(value.args[0], constants)
    return False


def _ints(values) -> bool:
    return isinstance(values, (list, tuple)) and all(isinstance(v, int) for v in values)


# --- per-operator checks --------------------------------------------------------------------

def _binary(node, constants) -> Optional[str]:
    if node.kwargs.get("alpha", 1) != 1:
        return f"alpha={node.kwargs['alpha']} is not 1"
    if node.kwargs.get("rounding_mode") is not None:
        return f"rounding_mode={node.kwargs['rounding_mode']!r} is not supported"
    tensors = 0
    for i, operand in enumerate(node.args[:2]):
        if _is_number(operand):
            continue
        reason = tensor_reason(operand, f"operand {i}")
        if reason:
            return reason
        tensors += 1
    return None if tensors else "no tensor operand"


def _unary(node, constants) -> Optional[str]:
    return tensor_reason(node.args[0], "the input")


def _clamp(node, constants) -> Optional[str]:
    bounds = list(node.args[1:3])
    if any(b is not None and not _is_number(b) for b in bounds):
        return "clamp bounds must be numbers (tensor bounds are not supported)"
    return tensor_reason(node.args[0], "the input")


def _pow(node, constants) -> Optional[str]:
    if node.args[1] != 2:
        return f"exponent {node.args[1]} is not 2 (only squaring is delegated)"
    return tensor_reason(node.args[0], "the input")


def _leaky_relu(node, constants) -> Optional[str]:
    return tensor_reason(node.args[0], "the input")


def _elu(node, constants) -> Optional[str]:
    scale = node.args[2] if len(node.args) > 2 else node.kwargs.get("scale", 1)
    input_scale = node.args[3] if len(node.args) > 3 else node.kwargs.get("input_scale", 1)
    if scale != 1 or input_scale != 1:
        return "ELU with scale or input_scale other than 1 is not supported"
    return tensor_reason(node.args[0], "the input")


def _softmax(node, constants) -> Optional[str]:
    val = _val(node.args[0])
    reason = tensor_reason(node.args[0], "the input")
    if reason:
        return reason
    dim = node.args[1] % max(val.dim(), 1)
    if dim != val.dim() - 1:
        return f"softmax over dim {node.args[1]}; XNNPACK only normalizes the last dim"
    if len(node.args) > 2 and node.args[2]:
        return "half_to_float softmax is not supported"
    return None


def _linear(node, constants) -> Optional[str]:
    x, weight = node.args[0], node.args[1]
    bias = node.args[2] if len(node.args) > 2 else None
    reason = tensor_reason(x, "the input")
    if reason:
        return reason
    if isinstance(weight, torch.fx.Node) and weight.target in quant.DEQUANTIZE:
        reason = quant.unsupported_reason(weight, constants)
        if reason:
            return f"its weight: {reason}"
        if quant.per_token_source(x) is not None:
            kind, reason = quant.weight_kind(weight, constants)
            if reason:
                return f"its weight: {reason}"
    if not _constant(weight, constants):
        return "the weight is not a constant (XNNPACK packs linear weights ahead of time)"
    if _val(weight).dim() != 2:
        return "the weight is not 2-D"
    if bias is not None and not _constant(bias, constants):
        return "the bias is not a constant"
    return None


def _addmm(node, constants) -> Optional[str]:
    bias, x, weight = node.args[:3]
    if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
        return "addmm with alpha or beta other than 1 is not supported"
    reason = tensor_reason(x, "the input")
    if reason:
        return reason
    if not _constant(weight, constants):
        return "the weight (mat2) is not a constant"
    if not _constant(bias, constants) or _val(bias).dim() != 1:
        return "the bias is not a 1-D constant"
    return None


def _mm(node, constants) -> Optional[str]:
    reason = tensor_reason(node.args[0], "the input")
    if reason:
        return reason
    if not _constant(node.args[1], constants):
        return "the weight (mat2) is not a constant"
    return None


def _bmm(node, constants) -> Optional[str]:
    for i in range(2):
        reason = tensor_reason(node.args[i], f"operand {i}")
        if reason:
            return reason
    return None


def _convolution(node, constants) -> Optional[str]:
    x, weight, bias, stride, padding, dilation, transposed, output_padding, groups = node.args
    reason = static_reason(x, "the input")
    if reason:
        return reason
    if _val(x).dim() != 4:
        return f"{_val(x).dim() - 2}-D convolution; only 2-D is delegated"
    if not _constant(weight, constants):
        return "the weight is not a constant"
    if bias is not None and not _constant(bias, constants):
        return "the bias is not a constant"
    if not (_ints(stride) and _ints(padding) and _ints(dilation)):
        return "stride, padding and dilation must be static"
    if any(p < 0 for p in padding):
        return "negative padding"
    if transposed:
        if any(d != 1 for d in dilation):
            return "dilated transposed convolution is not supported"
        if quant.is_quantized_value(x):
            return "quantized transposed convolution is not supported"
    return None


def _batch_norm(node, constants) -> Optional[str]:
    """Only when it folds into the convolution before it."""
    x = node.args[0]
    if not (isinstance(x, torch.fx.Node) and x.target is aten.convolution.default):
        return "batch norm is only delegated right after a convolution (folded into it)"
    if len(x.users) != 1:
        return "the convolution before the batch norm has other users, so it cannot be folded"
    if x.args[6]:
        return "batch norm after a transposed convolution is not folded"
    for i in (1, 2, 3, 4):
        if node.args[i] is None or not _constant(node.args[i], constants):
            return "the batch norm's weight, bias, mean and variance must be constants"
    if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
        return "the batch norm's saved statistics are used"
    return _convolution(x, constants)


def _pool_args(kernel, stride, padding, dilation=(1, 1)) -> Optional[str]:
    if not (_ints(kernel) and _ints(stride or kernel) and _ints(padding) and _ints(dilation)):
        return "pooling parameters must be static"
    return None


def _max_pool(node, constants) -> Optional[str]:
    args = list(node.args) + [None] * 6
    x, kernel, stride, padding, dilation, ceil_mode = args[:6]
    reason = static_reason(x, "the input")
    if reason:
        return reason
    if _val(x).dim() != 4:
        return "max pooling of a non-4-D tensor"
    if ceil_mode:
        return "ceil_mode=True is not supported"
    reason = _pool_args(kernel, stride, padding or [0, 0], dilation or [1, 1])
    if reason:
        return reason
    if node.target is aten.max_pool2d_with_indices.default:
        if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
            return "the max pooling indices are used"
    return None


def _avg_pool(node, constants) -> Optional[str]:
    args = list(node.args) + [None] * 7
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = args[:7]
    reason = static_reason(x, "the input")
    if reason:
        return reason
    if _val(x).dim() != 4:
        return "average pooling of a non-4-D tensor"
    if ceil_mode:
        return "ceil_mode=True is not supported"
    if divisor_override is not None:
        return "divisor_override is not supported"
    padding = padding or [0, 0]
    if any(padding) and count_include_pad is not False:
        return "padded average pooling counting the padding is not supported"
    return _pool_args(kernel, stride, padding)


def _adaptive_avg_pool(node, constants) -> Optional[str]:
    reason = static_reason(node.args[0], "the input")
    if reason:
        return reason
    if _val(node.args[0]).dim() != 4 or list(node.args[1]) != [1, 1]:
        return "adaptive average pooling is only delegated to a 1x1 output"
    return None


def _mean(node, constants) -> Optional[str]:
    x = node.args[0]
    reason = tensor_reason(x, "the input")
    if reason:
        return reason
    rank = _val(x).dim()
    dims = sorted(d % rank for d in node.args[1]) if rank else []
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    if rank != 4 or dims != [2, 3]:
        return "mean is only delegated over H and W of a 4-D tensor"
    reason = static_reason(x, "the input")
    if reason:
        return reason
    if not keepdim:
        return "mean over H and W is only delegated with keepdim=True"
    if node.kwargs.get("dtype") is not None:
        return "mean with a dtype is not supported"
    return None


def _cat(node, constants) -> Optional[str]:
    tensors = node.args[0]
    if not 2 <= len(tensors) <= 4:
        return f"cat of {len(tensors)} tensors; XNNPACK concatenates 2 to 4"
    for i, t in enumerate(tensors):
        reason = tensor_reason(t, f"input {i}")
        if reason:
            return reason
    return None


def _static_output(node, constants) -> Optional[str]:
    return static_reason(node.args[0], "the input") or static_reason(node, "the output")


def _permute(node, constants) -> Optional[str]:
    return tensor_reason(node.args[0], "the input") or tensor_reason(node, "the output")


def _reshape(node, constants) -> Optional[str]:
    """XNNPACK infers one dynamic dim of a reshape (written as 0), not more."""
    reason = tensor_reason(node.args[0], "the input") or tensor_reason(node, "the output")
    if reason:
        return reason
    sizes = [d for a in node.args[1:] for d in (a if isinstance(a, (list, tuple)) else [a])]
    if any(isinstance(d, torch.fx.Node) for d in sizes):
        return "the new shape reads a symbolic size computed in the graph"
    dynamic = [str(s) for s in _val(node).shape if is_dynamic(s)]
    if len(dynamic) > 1:
        return (f"the output has {len(dynamic)} dynamic dims ({', '.join(dynamic)}); XNNPACK's "
                f"reshape infers at most one")
    return None


def _slice(node, constants) -> Optional[str]:
    step = node.args[4] if len(node.args) > 4 else 1
    if step != 1:
        return f"slice with step {step}; only step 1 is delegated"
    return _static_output(node, constants)


def _pad(node, constants) -> Optional[str]:
    pad = node.args[1]
    if not _ints(pad) or any(p < 0 for p in pad):
        return "padding must be static and non-negative"
    value = node.args[2] if len(node.args) > 2 else 0
    if not _is_number(value):
        return "the padding value must be a number"
    return _static_output(node, constants)


def _upsample(node, constants) -> Optional[str]:
    reason = _static_output(node, constants)
    if reason:
        return reason
    if _val(node.args[0]).dim() != 4:
        return "bilinear upsampling of a non-4-D tensor"
    return None


def _identity(node, constants) -> Optional[str]:
    if node.kwargs.get("memory_format") not in (None, torch.contiguous_format,
                                                 torch.preserve_format):
        return f"clone to {node.kwargs['memory_format']} is not supported"
    return tensor_reason(node.args[0], "the input")


def _getitem(node, constants) -> Optional[str]:
    source = node.args[0]
    if not isinstance(source, torch.fx.Node) or node.args[1] != 0:
        return "only the first result of a multi-result operator is delegated"
    check = CHECKS.get(source.target)
    if check is None:
        return f"reads a result of {source.target}, which is not delegated"
    return check(source, constants)


# Views of a constant that preprocess folds into the constant itself.
_FOLDABLE = {aten.permute.default, aten.permute_copy.default, aten.t.default, aten.t_copy.default,
             aten.view.default, aten.view_copy.default, aten.reshape.default,
             aten.transpose.int, aten.transpose_copy.int}

CHECKS: Dict[object, Callable] = {
    aten.add.Tensor: _binary, aten.sub.Tensor: _binary, aten.mul.Tensor: _binary,
    aten.div.Tensor: _binary, aten.add.Scalar: _binary, aten.sub.Scalar: _binary,
    aten.mul.Scalar: _binary, aten.div.Scalar: _binary,
    aten.minimum.default: _binary, aten.maximum.default: _binary,
    aten.relu.default: _unary, aten.sigmoid.default: _unary, aten.tanh.default: _unary,
    aten.hardswish.default: _unary, aten.abs.default: _unary, aten.neg.default: _unary,
    aten.floor.default: _unary, aten.ceil.default: _unary, aten.sqrt.default: _unary,
    aten.square.default: _unary,
    aten.hardtanh.default: _clamp, aten.clamp.default: _clamp,
    aten.pow.Tensor_Scalar: _pow, aten.leaky_relu.default: _leaky_relu, aten.elu.default: _elu,
    aten._softmax.default: _softmax, aten.softmax.int: _softmax,
    aten.linear.default: _linear, aten.addmm.default: _addmm, aten.mm.default: _mm,
    aten.bmm.default: _bmm,
    aten.convolution.default: _convolution,
    aten._native_batch_norm_legit_no_training.default: _batch_norm,
    aten.max_pool2d.default: _max_pool, aten.max_pool2d_with_indices.default: _max_pool,
    aten.avg_pool2d.default: _avg_pool, aten._adaptive_avg_pool2d.default: _adaptive_avg_pool,
    aten.adaptive_avg_pool2d.default: _adaptive_avg_pool, aten.mean.dim: _mean,
    aten.cat.default: _cat,
    aten.view.default: _reshape, aten.view_copy.default: _reshape,
    aten.reshape.default: _reshape, aten._unsafe_view.default: _reshape,
    aten.squeeze.dim: _reshape, aten.squeeze.dims: _reshape,
    aten.squeeze_copy.dims: _reshape, aten.unsqueeze.default: _reshape,
    aten.unsqueeze_copy.default: _reshape,
    aten.permute.default: _permute, aten.permute_copy.default: _permute,
    aten.t.default: _permute, aten.t_copy.default: _permute,
    aten.transpose.int: _permute, aten.transpose_copy.int: _permute,
    aten.slice.Tensor: _slice, aten.slice_copy.Tensor: _slice,
    aten.constant_pad_nd.default: _pad,
    aten.upsample_bilinear2d.vec: _upsample, aten.upsample_bilinear2d.default: _upsample,
    aten.clone.default: _identity, aten.alias.default: _identity,
    aten.alias_copy.default: _identity,
    operator.getitem: _getitem,
}


def unsupported_reason(node: torch.fx.Node, constants: Set[str]) -> Optional[str]:
    """None if XNNPACK can run `node`, else why not."""
    if node.op != "call_function":
        return "not an operator call"
    q = quant.unsupported_reason(node, constants)
    if q is not quant.NOT_QUANT:
        return q
    check = CHECKS.get(node.target)
    if check is None:
        return "the operator has no XNNPACK lowering"
    reason = check(node, constants)
    if reason is None and node.target is not operator.getitem:
        for value in (node.meta.get("val"),) if isinstance(node.meta.get("val"),
                                                             torch.Tensor) else ():
            if value.dtype not in FLOAT_DTYPES and not quant.is_quantized_value(node):
                return f"the output has dtype {value.dtype}; XNNPACK takes float32 here"
    return reason
