#!/usr/bin/env python3
"""Materialises the conformance cases and their torch results.

    python3 generate.py OUT_DIR [--only SUBSTRING] [--list]

Imports every module in conformance/cases/, and for each Case: binds its
arguments to the out kernel's schema (filling schema defaults), draws the
input tensors from a generator seeded by the case id, runs the reference
(the functional overload found by schema matching, or the case's own), and
writes OUT_DIR/manifest.json plus OUT_DIR/tensors.bin, the .npy encodings of
every tensor back to back (the manifest gives each one's offset and size).
bfloat16 tensors are stored as their uint16 bits ("bf16": true in the
manifest); tensors are stored in logical (row-major) order, and "dim_order"
says how the kernel's tensor must be laid out.

Exits non-zero, naming each case, when a case is malformed (unknown operator
or argument, a value that does not fit the schema type) or its reference
raises; the manifest is then not written, so no stale cases run.
"""

import argparse
import importlib
import io
import json
import math
import os
import pkgutil
import sys
import traceback
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# torch's C++ warnings (e.g. var's "degrees of freedom is <= 0", which cases
# test on purpose) would bury the report.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from conformance import schema_match  # noqa: E402
from conformance.spec import Case, T  # noqa: E402

# ATen ScalarType / MemoryFormat / Layout codes, as kernels receive them (Int).
_SCALAR_TYPE_CODE = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3,
                     torch.int64: 4, torch.float16: 5, torch.float32: 6, torch.float64: 7,
                     torch.bool: 11, torch.bfloat16: 15}
_MEMORY_FORMAT_CODE = {torch.contiguous_format: 0, torch.preserve_format: 1,
                       torch.channels_last: 2, torch.channels_last_3d: 3}
_LAYOUT_CODE = {torch.strided: 0}

# Per-dtype (rtol, atol) of the comparison.
TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-9, 1e-9),
              torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}


class CaseError(Exception):
    """A malformed case or a reference that failed; the message names the case."""


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def case_seed(case_id):
    return zlib.crc32(case_id.encode()) & 0x7FFFFFFF


def materialize(t, gen):
    """The torch tensor a T describes, laid out in its dim_order."""
    if t.values is not None:
        x = torch.tensor(t.values, dtype=torch.float64 if t.dtype.is_floating_point else None)
        x = x.to(t.dtype).reshape(t.shape)
    elif t.dtype == torch.bool:
        x = torch.randint(0, 2, t.shape, generator=gen, dtype=torch.int64).to(torch.bool)
    elif t.dtype.is_floating_point:
        low = -3.0 if t.low is None else float(t.low)
        high = 3.0 if t.high is None else float(t.high)
        x = (torch.rand(t.shape, generator=gen, dtype=torch.float64) * (high - low) + low).to(t.dtype)
    else:
        default_low, default_high = (0, 20) if t.dtype == torch.uint8 else (-10, 10)
        low = default_low if t.low is None else int(math.ceil(t.low))
        high = default_high if t.high is None else int(math.ceil(t.high))
        x = torch.randint(low, high, t.shape, generator=gen, dtype=torch.int64).to(t.dtype)
    if not t.contiguous:
        inverse = [t.dim_order.index(d) for d in range(len(t.shape))]
        x = x.permute(t.dim_order).contiguous().permute(inverse)
    return x


def tensor_dim_order(x):
    """The dim order of a strided tensor: dims by decreasing stride, ties
    (size-1 dims) in index order. Kernels take any dim order, so ambiguous
    cases only need to pick one."""
    strides = x.stride()
    return sorted(range(x.dim()), key=lambda d: -strides[d])


class Writer:
    """Collects every tensor's .npy bytes for tensors.bin (one file, since
    thousands of small files are slow to write and delete) and makes their
    manifest entries."""

    def __init__(self):
        self.blob = io.BytesIO()
        self.count = 0

    def tensor(self, x, name):
        self.count += 1
        logical = x.detach().contiguous().cpu()
        if logical.dtype == torch.bfloat16:
            array = logical.view(torch.int16).numpy().view(np.uint16)
        else:
            array = logical.numpy()
        offset = self.blob.tell()
        np.save(self.blob, array, allow_pickle=False)
        return {"kind": "tensor", "name": name, "offset": offset,
                "nbytes": self.blob.tell() - offset, "dtype": dtype_name(x.dtype),
                "shape": list(x.shape), "dim_order": tensor_dim_order(x),
                "bf16": x.dtype == torch.bfloat16}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _int_list(arg, value, where):
    if _is_int(value):
        return [value] * (arg.list_size or 1)
    if isinstance(value, (list, tuple)) and all(_is_int(v) for v in value):
        return list(value)
    raise CaseError(f"{where}: {arg.type} needs a list of ints, got {value!r}")


def bind(case, op, case_id):
    """[(Arg, python value)] for the non-out arguments, defaults filled."""
    non_out = [a for a in schema_match.schema_args(op) if not a.is_out]
    given = {}
    if isinstance(case.args, dict):
        names = {a.name for a in non_out}
        for key in case.args:
            if key not in names:
                raise CaseError(f"{case_id}: {case.op} has no argument {key!r} "
                                f"(its arguments: {', '.join(a.name for a in non_out)})")
        given = dict(case.args)
    else:
        if len(case.args) > len(non_out):
            raise CaseError(f"{case_id}: {len(case.args)} arguments given, {case.op} takes "
                            f"{len(non_out)} besides its outs")
        given = {a.name: v for a, v in zip(non_out, case.args)}
    bound = []
    for a in non_out:
        if a.name in given:
            bound.append((a, given[a.name]))
        elif a.has_default:
            bound.append((a, a.default))
        else:
            raise CaseError(f"{case_id}: argument {a.name!r} ({a.type}) of {case.op} is required")
    return bound


def encode_value(arg, value, gen, writer, stem, case_id):
    """(manifest entry, torch value) for one argument; checks it fits the type."""
    where = f"{case_id}: argument {arg.name!r}"
    base = arg.base_type
    if value is None:
        if not arg.optional:
            raise CaseError(f"{where}: {arg.type} is not optional, got None")
        return {"kind": "none"}, None
    if base == "Tensor":
        if not isinstance(value, T):
            raise CaseError(f"{where}: Tensor needs a T(...), got {value!r}")
        x = materialize(value, gen)
        return writer.tensor(x, stem), x
    if base in ("Tensor[]", "Tensor?[]"):
        optional_items = base == "Tensor?[]"
        if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, T) or (optional_items and v is None) for v in value):
            raise CaseError(f"{where}: {arg.type} needs a list of T(...), got {value!r}")
        items, xs = [], []
        for i, v in enumerate(value):
            if v is None:
                items.append({"kind": "none"})
                xs.append(None)
            else:
                x = materialize(v, gen)
                items.append(writer.tensor(x, f"{stem}_{i}"))
                xs.append(x)
        kind = "optional_tensor_list" if optional_items else "tensor_list"
        return {"kind": kind, "items": items}, xs
    if base == "Scalar":
        if isinstance(value, bool):
            return {"kind": "bool", "value": value}, value
        if _is_int(value):
            return {"kind": "int", "value": value}, value
        if isinstance(value, float):
            return {"kind": "double", "value": repr(value)}, value
        raise CaseError(f"{where}: Scalar needs a bool, int or float, got {value!r}")
    if base in ("int", "SymInt"):
        if not _is_int(value):
            raise CaseError(f"{where}: {arg.type} needs an int, got {value!r}")
        return {"kind": "int", "value": value}, value
    if base == "float":
        if not (_is_int(value) or isinstance(value, float)):
            raise CaseError(f"{where}: float needs a number, got {value!r}")
        return {"kind": "double", "value": repr(float(value))}, float(value)
    if base == "bool":
        if not isinstance(value, bool):
            raise CaseError(f"{where}: bool needs True/False, got {value!r}")
        return {"kind": "bool", "value": value}, value
    if base in ("int[]", "SymInt[]"):
        ints = _int_list(arg, value, where)
        return {"kind": "int_list", "value": ints}, ints
    if base == "float[]":
        if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise CaseError(f"{where}: float[] needs a list of numbers, got {value!r}")
        floats = [float(v) for v in value]
        return {"kind": "double_list", "value": [repr(v) for v in floats]}, floats
    if base == "bool[]":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, bool) for v in value):
            raise CaseError(f"{where}: bool[] needs a list of bools, got {value!r}")
        return {"kind": "bool_list", "value": list(value)}, list(value)
    if base == "ScalarType":
        if value not in _SCALAR_TYPE_CODE:
            raise CaseError(f"{where}: ScalarType needs a torch dtype, got {value!r}")
        return {"kind": "int", "value": _SCALAR_TYPE_CODE[value]}, value
    if base == "MemoryFormat":
        if value not in _MEMORY_FORMAT_CODE:
            raise CaseError(f"{where}: MemoryFormat needs a torch memory format, got {value!r}")
        return {"kind": "int", "value": _MEMORY_FORMAT_CODE[value]}, value
    if base == "Layout":
        if value not in _LAYOUT_CODE:
            raise CaseError(f"{where}: Layout needs torch.strided, got {value!r}")
        return {"kind": "int", "value": _LAYOUT_CODE[value]}, value
    if base == "str":
        if not isinstance(value, str):
            raise CaseError(f"{where}: str needs a string, got {value!r}")
        return {"kind": "string", "value": value}, value
    raise CaseError(f"{where}: the harness does not support schema type {arg.type}")


def call_torch(op, bound_args, values):
    """Calls `op` with values bound to their schema arguments."""
    positional, keywords = [], {}
    for arg, value in zip(bound_args, values):
        if arg.kwarg_only:
            keywords[arg.name] = value
        else:
            positional.append(value)
    return op(*positional, **keywords)


class _KwargOnly:
    """A keyword argument added to call_torch's bound arguments (the outs)."""

    def __init__(self, name):
        self.name = name
        self.kwarg_only = True


def first_tensor(values):
    """The first tensor among the materialised arguments, tensor lists included."""
    for x in values:
        if isinstance(x, torch.Tensor):
            return x
        if isinstance(x, list):
            for item in x:
                if isinstance(item, torch.Tensor):
                    return item
    return None


def as_tensor_tuple(result, case_id):
    if isinstance(result, torch.Tensor):
        return (result,)
    if isinstance(result, (tuple, list)) and all(isinstance(r, torch.Tensor) for r in result):
        return tuple(result)
    raise CaseError(f"{case_id}: the reference returned {type(result).__name__}, not tensors")


def tolerances(case, dtype):
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    return (rtol if case.rtol is None else float(case.rtol),
            atol if case.atol is None else float(case.atol))


def _per_out(value, count):
    """A per-out setting given once or as a list."""
    if value is None:
        return [None] * count
    if isinstance(value, list):
        return value
    return [value] * count


def generate_case(case, case_id, index, writer):
    """The manifest entry of one case; raises CaseError when it is malformed."""
    try:
        op = schema_match.lookup(case.op)
    except LookupError as e:
        raise CaseError(f"{case_id}: {e}") from None
    args = schema_match.schema_args(op)
    outs = [a for a in args if a.is_out]
    if not outs:
        raise CaseError(f"{case_id}: {case.op} is not an out variant (no kwarg-only written argument)")
    list_out = len(outs) == 1 and outs[0].base_type == "Tensor[]"
    if not list_out and any(a.base_type != "Tensor" for a in outs):
        raise CaseError(f"{case_id}: the harness does not support out arguments of {case.op}")

    gen = torch.Generator().manual_seed(case_seed(case_id))
    bound = bind(case, op, case_id)
    entries, values = [], []
    for i, (arg, value) in enumerate(bound):
        entry, x = encode_value(arg, value, gen, writer, f"c{index:05d}_a{i}", case_id)
        entries.append(entry)
        values.append(x)
    bound_args = [a for a, _ in bound]

    reference_name = "custom"
    results = None
    error = None
    if case.reference is not None:
        reference = lambda: case.reference(*values)  # noqa: E731
    else:
        functional = schema_match.functional_for(op)
        if functional is None:
            reference = None
            if case.expect_error is None:
                raise CaseError(f"{case_id}: {case.op} has no functional overload with the same "
                                "arguments; give the case a reference=")
        else:
            reference_name = schema_match.kernel_name(functional)
            reference = lambda: call_torch(functional, bound_args, values)  # noqa: E731
    if reference is not None:
        try:
            results = as_tensor_tuple(reference(), case_id)
        except CaseError:
            raise
        except Exception as e:  # noqa: BLE001 - any torch failure, reported per case
            error = e
    if case.expect_error is None and error is not None:
        raise CaseError(f"{case_id}: the reference {reference_name} raised "
                        f"{type(error).__name__}: {str(error).strip().splitlines()[0]}")

    # How many outs the kernel gets: the schema's, or for a Tensor[] out the
    # case's out_shapes (an error case may give a wrong count) or the result's.
    if not list_out:
        num_outs = len(outs)
    elif case.out_shapes is not None:
        num_outs = len(case.out_shapes)
    elif results is not None:
        num_outs = len(results)
    elif isinstance(case.out_dtype, list):
        num_outs = len(case.out_dtype)
    else:
        num_outs = 1
    if case.expect_error is None and len(results) != num_outs:
        raise CaseError(f"{case_id}: the reference returned {len(results)} tensors, "
                        f"the case gives {case.op} {num_outs} outs")
    out_dtypes = _per_out(case.out_dtype, num_outs)
    out_shapes = [None] * num_outs if case.out_shapes is None else case.out_shapes
    if len(out_dtypes) != num_outs or len(out_shapes) != num_outs:
        raise CaseError(f"{case_id}: out_dtype/out_shapes give {len(out_dtypes)}/{len(out_shapes)} "
                        f"entries, {case.op} has {num_outs} outs")

    if case.expect_error is None and any(d is not None for d in out_dtypes):
        # ATen's out variant decides what an out dtype gets (or rejects it).
        out_tensors = [torch.empty(r.shape, dtype=d or r.dtype) for r, d in zip(results, out_dtypes)]
        try:
            if case.reference is None:
                kw = ({outs[0].name: out_tensors} if list_out
                      else {a.name: t for a, t in zip(outs, out_tensors)})
                call_torch(op, bound_args + [_KwargOnly(name) for name in kw],
                           values + list(kw.values()))
                results = tuple(out_tensors)
            else:
                results = tuple(r.to(t.dtype) for r, t in zip(results, out_tensors))
        except Exception as e:  # noqa: BLE001
            raise CaseError(f"{case_id}: ATen's {case.op} rejects these out dtypes "
                            f"({type(e).__name__}: {str(e).strip().splitlines()[0]}); make it an "
                            "expect_error case") from None

    out_entries = []
    for k in range(num_outs):
        if case.expect_error is None:
            r = results[k]
            dtype = out_dtypes[k] or r.dtype
            shape = list(out_shapes[k]) if out_shapes[k] is not None else list(r.shape)
            if len(shape) != r.dim():
                raise CaseError(f"{case_id}: out_shapes[{k}] {tuple(shape)} has rank {len(shape)}, "
                                f"the result has rank {r.dim()} (a kernel cannot change the rank)")
            rtol, atol = tolerances(case, dtype)
            entry = {"dtype": dtype_name(dtype), "shape": shape, "dim_order": tensor_dim_order(r),
                     "rtol": rtol, "atol": atol,
                     "expected": writer.tensor(r.to(dtype), f"c{index:05d}_out{k}")}
        else:
            # No expected values: the outs take what is given, else the
            # reference's result (when it ran), else the first tensor argument.
            if results:
                template = results[min(k, len(results) - 1)]
            else:
                template = first_tensor(values)
            if template is None and (out_dtypes[k] is None or out_shapes[k] is None):
                raise CaseError(f"{case_id}: give out_dtype and out_shapes (no tensor argument "
                                "to take them from)")
            dtype = out_dtypes[k] or template.dtype
            shape = list(out_shapes[k]) if out_shapes[k] is not None else list(template.shape)
            entry = {"dtype": dtype_name(dtype), "shape": shape,
                     "dim_order": list(range(len(shape))), "rtol": 0.0, "atol": 0.0}
        out_entries.append(entry)

    returns = len(op._schema.returns)
    return {
        "id": case_id,
        "op": case.op,
        "reference": reference_name,
        "args": entries,
        "outs": out_entries,
        "list_out": list_out,
        # Return slots: "none" (schema returns nothing), "out" (the one out
        # tensor again) or "list" (one TensorList holding every out).
        "returns": "none" if returns == 0 else ("out" if returns == 1 else "list"),
        "expect_error": case.expect_error,
    }


def load_case_modules(only_module=None):
    """[(module name, CASES)] for every module in conformance/cases/."""
    import conformance.cases as package
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if only_module and info.name != only_module:
            continue
        try:
            module = importlib.import_module(f"conformance.cases.{info.name}")
        except Exception:  # noqa: BLE001 - report which module is broken
            raise CaseError(f"case module cases/{info.name}.py failed to import:\n"
                            f"{traceback.format_exc()}") from None
        cases = getattr(module, "CASES", None)
        if not isinstance(cases, list) or not all(isinstance(c, Case) for c in cases):
            raise CaseError(f"case module cases/{info.name}.py must define CASES, a list of Case")
        found.append((info.name, cases))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="directory for manifest.json and tensors.bin")
    parser.add_argument("--only", default="", help="keep only cases whose id contains this")
    parser.add_argument("--module", default=None, help="only this module of cases/")
    parser.add_argument("--list", action="store_true", help="print the case ids")
    options = parser.parse_args(argv)

    os.makedirs(options.out_dir, exist_ok=True)
    manifest_path = os.path.join(options.out_dir, "manifest.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)  # Never leave a stale manifest behind.
    writer = Writer()
    entries, errors, seen = [], [], {}
    try:
        modules = load_case_modules(options.module)
    except CaseError as e:
        print(f"conformance: error: {e}", file=sys.stderr)
        return 1
    for module_name, cases in modules:
        for case in cases:
            label = case.name
            if not label:
                label = case.describe_args()
                if case.out_dtype is not None:
                    dts = case.out_dtype if isinstance(case.out_dtype, list) else [case.out_dtype]
                    label += ",out=" + "/".join(dtype_name(d) for d in dts)
            base_id = f"{case.op}[{label}]"
            seen[base_id] = seen.get(base_id, 0) + 1
            case_id = base_id if seen[base_id] == 1 else f"{base_id}#{seen[base_id]}"
            if options.only and options.only not in case_id:
                continue
            try:
                entry = generate_case(case, case_id, len(entries), writer)
            except CaseError as e:
                errors.append(f"cases/{module_name}.py: {e}")
                continue
            except Exception as e:  # noqa: BLE001 - a harness bug; still name the case
                errors.append(f"cases/{module_name}.py: {case_id}: {type(e).__name__}: {e}")
                continue
            entry["module"] = module_name
            entries.append(entry)
            if options.list:
                print(case_id)
    if errors:
        for message in errors:
            print(f"conformance: error: {message}", file=sys.stderr)
        print(f"conformance: {len(errors)} malformed case(s); no manifest written", file=sys.stderr)
        return 1
    ops = sorted({e["op"] for e in entries})
    with open(os.path.join(options.out_dir, "tensors.bin"), "wb") as f:
        f.write(writer.blob.getbuffer())
    with open(manifest_path, "w") as f:
        json.dump({"version": 1, "tensors": "tensors.bin", "cases": entries, "ops": ops}, f,
                  separators=(",", ":"))
    print(f"conformance: generated {len(entries)} cases, {len(ops)} ops, "
          f"{writer.count} tensors in {options.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
