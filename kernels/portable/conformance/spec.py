"""The case API for the portable kernels' conformance harness.

A case module (conformance/cases/<family>.py) defines ``CASES = [Case(...), ...]``.
generate.py materialises every case with torch, runs the torch reference and
writes the inputs and expected outputs; torchlight_conformance_test runs each
case through the kernel registry and compares.

    from conformance.spec import Case, T, ALL_DTYPES, FLOAT_DTYPES
    CASES = [Case("aten::abs.out", {"self": T((2, 3), dt)}) for dt in ALL_DTYPES]

Nothing here runs torch ops; it only describes cases and checks that a
description is well formed (a malformed one raises ValueError at import, naming
the problem, so the fixture fails loudly).
"""

import torch

# Every dtype the portable kernels support, in ATen's ScalarType order.
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
BOOL_DTYPES = [torch.bool]
REAL_DTYPES_NO_BOOL = FLOAT_DTYPES + INT_DTYPES
ALL_DTYPES = REAL_DTYPES_NO_BOOL + BOOL_DTYPES

_DTYPE_BY_NAME = {str(dt).replace("torch.", ""): dt for dt in ALL_DTYPES}
_DTYPE_BY_NAME.update({"float": torch.float32, "double": torch.float64,
                       "half": torch.float16, "long": torch.int64, "int": torch.int32})


def to_dtype(dtype):
    """torch.dtype from a torch.dtype or its name ("float32", "bfloat16", ...)."""
    if isinstance(dtype, torch.dtype):
        if dtype not in ALL_DTYPES:
            raise ValueError(f"dtype {dtype} is not one the portable kernels support")
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPE_BY_NAME:
        return _DTYPE_BY_NAME[dtype]
    raise ValueError(f"unknown dtype {dtype!r}")


def _nested_shape(values):
    """Shape of a rectangular nested list (a scalar has shape ())."""
    if not isinstance(values, (list, tuple)):
        return ()
    if len(values) == 0:
        return (0,)
    inner = [_nested_shape(v) for v in values]
    if any(s != inner[0] for s in inner):
        raise ValueError(f"values are not rectangular: {values!r}")
    return (len(values),) + inner[0]


class T:
    """A tensor argument: shape, dtype and how to fill it.

    Values are drawn from a generator seeded by the case id, uniformly in
    [low, high) (defaults per dtype: floats [-3, 3), signed ints [-10, 10),
    uint8 [0, 20), bool {False, True}), or are exactly ``values`` (a nested
    list whose shape must equal ``shape``; NaN/inf allowed for floats).
    ``dim_order`` (a permutation of range(ndim), outermost first) lays the
    tensor out in memory in that order, e.g. (0, 2, 3, 1) is channels-last.
    """

    def __init__(self, shape, dtype, low=None, high=None, dim_order=None, values=None):
        if isinstance(shape, int):
            shape = (shape,)
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"negative size in shape {self.shape}")
        self.dtype = to_dtype(dtype)
        self.low = low
        self.high = high
        if low is not None and high is not None and not low < high:
            raise ValueError(f"empty value range [{low}, {high})")
        if dim_order is None:
            self.dim_order = tuple(range(len(self.shape)))
        else:
            self.dim_order = tuple(int(d) for d in dim_order)
            if sorted(self.dim_order) != list(range(len(self.shape))):
                raise ValueError(f"dim_order {self.dim_order} is not a permutation of "
                                 f"range({len(self.shape)}) for shape {self.shape}")
        self.values = values
        if values is not None and _nested_shape(values) != self.shape:
            raise ValueError(f"values have shape {_nested_shape(values)}, expected {self.shape}")

    @property
    def contiguous(self):
        return self.dim_order == tuple(range(len(self.shape)))

    def describe(self):
        """Short text for case names: f32[2,3], f32[2,3]@(1,0)."""
        short = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
                 torch.bfloat16: "bf16", torch.uint8: "u8", torch.int8: "i8",
                 torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
                 torch.bool: "b8"}[self.dtype]
        text = f"{short}[{','.join(str(s) for s in self.shape)}]"
        if not self.contiguous:
            text += "@(" + ",".join(str(d) for d in self.dim_order) + ")"
        return text

    def __repr__(self):
        return f"T({self.describe()})"


def _check_value(value, where):
    """A case argument must be one of the kinds the harness can pass on."""
    if value is None or isinstance(value, (T, bool, int, float, str, torch.dtype)):
        return
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, T) for v in value):
            return
        if all(isinstance(v, bool) for v in value):
            return
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return
        if all(isinstance(v, T) or v is None for v in value):
            return  # Tensor?[] (index)
    raise ValueError(f"argument {where}: unsupported value {value!r} (expected T, "
                     "int, float, bool, str, torch.dtype, None, a list of ints/floats/bools or of T)")


class Case:
    """One call of one kernel.

    op: the out-variant kernel name, e.g. "aten::sub.out".
    args: the NON-out arguments, as a dict by schema name or a list in schema
      order; omitted arguments take the schema default.
    name: optional text making the case id readable/unique (default: derived
      from the args).
    out_dtype: dtype of the out tensor(s) given to the kernel (a dtype, or a
      list for several outs); default: the reference result's dtype. The
      expected values are the reference result cast to it.
    rtol/atol: override the per-dtype tolerances.
    expect_error: a substring the kernel's error message must contain; no
      reference runs. The out tensors then have out_shapes (default: the
      first tensor argument's shape) and out_dtype (default: its dtype).
    reference: callable(*materialised args in schema order, non-out only) ->
      tensor or tuple of tensors, replacing the functional torch op.
    out_shapes: the shapes the out tensors start with (a shape, or a list of
      shapes for several outs); default: the expected shapes. A different
      shape checks that the kernel resizes its out tensor.
    """

    def __init__(self, op, args, name="", out_dtype=None, rtol=None, atol=None,
                 expect_error=None, reference=None, out_shapes=None):
        if not isinstance(op, str) or "::" not in op or "." not in op.split("::", 1)[1]:
            raise ValueError(f"op {op!r} must be '<namespace>::<op>.<overload>'")
        self.op = op
        if isinstance(args, dict):
            for key, value in args.items():
                if not isinstance(key, str):
                    raise ValueError(f"{op}: argument key {key!r} is not a string")
                _check_value(value, f"{op}({key})")
            self.args = dict(args)
        elif isinstance(args, (list, tuple)):
            for i, value in enumerate(args):
                _check_value(value, f"{op}(#{i})")
            self.args = list(args)
        else:
            raise ValueError(f"{op}: args must be a dict or a list, got {type(args).__name__}")
        self.name = str(name)
        if out_dtype is not None:
            if isinstance(out_dtype, (list, tuple)):
                out_dtype = [to_dtype(d) for d in out_dtype]
            else:
                out_dtype = to_dtype(out_dtype)
        self.out_dtype = out_dtype
        self.rtol = rtol
        self.atol = atol
        if expect_error is not None and not isinstance(expect_error, str):
            raise ValueError(f"{op}: expect_error must be a string")
        self.expect_error = expect_error
        if reference is not None and not callable(reference):
            raise ValueError(f"{op}: reference must be callable")
        self.reference = reference
        if out_shapes is not None:
            out_shapes = list(out_shapes)
            if all(isinstance(s, int) for s in out_shapes):
                out_shapes = [tuple(out_shapes)]  # one shape
            else:
                out_shapes = [tuple(s) for s in out_shapes]
        self.out_shapes = out_shapes

    def describe_args(self):
        """Short text of the arguments, used for the default case name."""
        def one(v):
            if isinstance(v, T):
                return v.describe()
            if isinstance(v, (list, tuple)):
                return "[" + ",".join(one(x) for x in v) + "]"
            if isinstance(v, torch.dtype):
                return str(v).replace("torch.", "")
            return repr(v)
        if isinstance(self.args, dict):
            return ",".join(f"{k}={one(v)}" for k, v in self.args.items())
        return ",".join(one(v) for v in self.args)

    def __repr__(self):
        return f"Case({self.op}, {self.name or self.describe_args()})"
