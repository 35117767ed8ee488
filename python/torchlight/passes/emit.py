"""emit_program: lowered MethodGraphs -> schema.Program plus its raw data.

Values are emitted in graph order, as the reference emitter does:
placeholders first (constants, buffers, inputs, in signature order), then
per node its alloc'd out tensors, then the scalars its call needs. A kernel
call's args are the operator's schema arguments in schema order, defaults
filled in, followed by the return value (the out tensor again, or one
TensorList for several). Int lists hold indices of Int values, so a
symbolic size computed at run time is seen by every list holding it.
Control flow markers (passes/control_flow.py) become JumpFalseCall and
MoveCall instructions; inputs marked by passes/free_calls.py get a FreeCall.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.fx
from torch._ops import OpOverload
from torch.utils._pytree import tree_flatten, treespec_dumps

from torchlight import ops
from torchlight.errors import ExportError, node_error
from torchlight.method_graph import MethodGraph, is_symbolic, upper_bound, upper_bound_sizes
from torchlight.passes import control_flow
from torchlight.passes.debug_handles import DEBUG_HANDLE
from torchlight.passes.free_calls import FREE_AFTER
from torchlight.passes.memory_planning import ALLOCATION
from torchlight.passes.out_variants import OUT_ALLOCS
from torchlight.pte import schema
from torchlight.pte.pte_file import ProgramData


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The tensor's elements, contiguous, little-endian, as stored in a .pte."""
    t = tensor.detach().cpu().contiguous()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


@dataclass
class ProgramState:
    """Data shared by all methods of a program, deduplicated by content."""

    constants: List[bytes] = field(default_factory=lambda: [b""])
    mutable_data: List[bytes] = field(default_factory=lambda: [b""])
    delegate_blobs: List[bytes] = field(default_factory=list)
    _constant_index: Dict[bytes, int] = field(default_factory=dict)
    _blob_index: Dict[bytes, int] = field(default_factory=dict)

    def add_constant(self, tensor: torch.Tensor) -> int:
        data = tensor_bytes(tensor)
        key = hashlib.sha256(data).digest()
        if key not in self._constant_index:
            self.constants.append(data)
            self._constant_index[key] = len(self.constants) - 1
        return self._constant_index[key]

    def add_mutable(self, tensor: torch.Tensor) -> int:
        # Not deduplicated: each buffer's initial value is its own entry, so
        # tools can map entries back to buffers.
        self.mutable_data.append(tensor_bytes(tensor))
        return len(self.mutable_data) - 1

    def add_blob(self, blob: bytes) -> int:
        key = hashlib.sha256(blob).digest()
        if key not in self._blob_index:
            self.delegate_blobs.append(bytes(blob))
            self._blob_index[key] = len(self.delegate_blobs) - 1
        return self._blob_index[key]


def _strip_optional(t):
    return t.getElementType() if isinstance(t, torch.OptionalType) else t


def _frames(node: torch.fx.Node) -> schema.FrameList:
    trace = node.meta.get(ops.STACK_TRACE) or ""
    frames = [schema.Frame(m["file"], int(m["line"]), m["func"], m["code"].strip())
              for m in re.finditer(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in '
                                   r'(?P<func>\S+)\n(?P<code>[^\n]*)', trace)]
    return schema.FrameList(frames)


def _encode_spec(spec) -> str:
    """A pytree spec as torch's JSON (as the reference writes it). Types
    pytree cannot serialize (e.g. torch.return_types) fall back to the
    spec's text; the runtime does not read this field."""
    if spec is None:
        return ""
    try:
        return treespec_dumps(spec)
    except NotImplementedError:
        return str(spec)


@dataclass
class MethodDebugInfo:
    """What ETRecord needs to map a method's instructions back to graph
    nodes, keyed by instruction index (ETDump's instruction_id)."""

    # An operator call's node handle; a delegate call's list of the handles
    # of every node in its partition.
    debug_handle_map: Dict[int, Union[int, List[int]]] = field(default_factory=dict)
    # Delegate calls whose backend gave a map: {"name": backend id,
    # "delegate_map": {delegate debug id: [handles]}}.
    delegate_map: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    # Output count of delegate calls and multi-output operator calls.
    instruction_id_to_num_outs_map: Dict[int, int] = field(default_factory=dict)


class _MethodEmitter:
    def __init__(self, method: MethodGraph, state: ProgramState, emit_stacktrace: bool):
        self.method = method
        self.state = state
        self.emit_stacktrace = emit_stacktrace
        self.values: List[schema.EValue] = []
        self.node_values: Dict[torch.fx.Node, Any] = {}
        self.operators: List[schema.Operator] = []
        self.operator_index: Dict[Tuple[str, str], int] = {}
        self.delegates: List[schema.BackendDelegate] = []
        self.delegate_index: Dict[int, int] = {}
        self.instructions: List[schema.Instruction] = []
        self.stacktrace: List[schema.FrameList] = []
        self.node: Optional[torch.fx.Node] = None
        # Control flow: per cond_begin / cond_else node, the index of its
        # JumpFalseCall, whose destination is set once the target is known.
        self.pending_jumps: Dict[torch.fx.Node, int] = {}
        self.false_index: Optional[int] = None
        self.debug = MethodDebugInfo()

    # --- Values ------------------------------------------------------------------

    def add(self, val) -> int:
        self.values.append(schema.EValue(val))
        return len(self.values) - 1

    def tensor(self, node: torch.fx.Node, val: torch.Tensor, data_buffer_idx: int = 0,
               extra: Optional[schema.ExtraTensorInfo] = None) -> schema.Tensor:
        try:
            scalar_type = ops.scalar_type(val.dtype)
        except KeyError as e:
            raise node_error(node, str(e.args[0])) from None
        dynamic = any(is_symbolic(s) for s in val.shape)
        allocation = node.meta.get(ALLOCATION)
        return schema.Tensor(
            scalar_type=scalar_type,
            sizes=upper_bound_sizes(val, self.method, node),
            dim_order=list(range(val.dim())),
            data_buffer_idx=data_buffer_idx,
            allocation_info=None if allocation is None else schema.AllocationDetails.at(*allocation),
            shape_dynamism=(schema.TensorShapeDynamism.DYNAMIC_BOUND if dynamic
                            else schema.TensorShapeDynamism.STATIC),
            extra_tensor_info=extra)

    def scalar(self, value: Any) -> int:
        """A new value for a Python constant (bool, int, float, str, enum, None)."""
        if value is None:
            return self.add(schema.Null())
        if isinstance(value, bool):
            return self.add(schema.Bool(value))
        if isinstance(value, int):
            return self.add(schema.Int(value))
        if isinstance(value, float):
            return self.add(schema.Double(value))
        if isinstance(value, str):
            return self.add(schema.String(value))
        code = ops.enum_code(value)
        if code is not None:
            return self.add(schema.Int(code))
        if isinstance(value, torch.device):
            return self.add(schema.String(str(value)))
        raise node_error(self.node, f"cannot emit the constant {value!r} "
                                    f"({type(value).__name__})")

    def node_value(self, node: torch.fx.Node) -> Any:
        if node not in self.node_values:
            raise node_error(self.node, f"uses '{node.name}', which has no emitted value")
        return self.node_values[node]

    def argument(self, value: Any, arg_type, n: Optional[int] = None) -> int:
        """The value index for one schema argument of type `arg_type`."""
        if isinstance(value, torch.fx.Node):
            index = self.node_value(value)
            if isinstance(index, list):
                return self.add(schema.TensorList(list(index)))
            return index
        if value is None:
            return self.add(schema.Null())
        t = _strip_optional(arg_type)
        if isinstance(t, torch.ListType):
            if not isinstance(value, (list, tuple)):
                value = [value] * (n or 1)  # int[2] accepts a single int.
            return self.list_argument(list(value), t.getElementType())
        return self.scalar(value)

    def list_argument(self, items: List[Any], element) -> int:
        inner = _strip_optional(element)
        if isinstance(inner, (torch.IntType, torch.SymIntType)):
            return self.add(schema.IntList([self.node_value(i) if isinstance(i, torch.fx.Node)
                                            else self.scalar(int(i)) for i in items]))
        if isinstance(inner, torch.FloatType):
            return self.add(schema.DoubleList([float(i) for i in items]))
        if isinstance(inner, torch.BoolType):
            return self.add(schema.BoolList([bool(i) for i in items]))
        if isinstance(inner, torch.TensorType):
            if isinstance(element, torch.OptionalType):
                return self.add(schema.OptionalTensorList(
                    [-1 if i is None else self.node_value(i) for i in items]))
            return self.add(schema.TensorList([self.node_value(i) for i in items]))
        raise node_error(self.node, f"lists of {element} cannot be emitted")

    # --- Instructions ---------------------------------------------------------------

    def operator(self, name: str, overload: str) -> int:
        key = (name, overload)
        if key not in self.operator_index:
            self.operators.append(schema.Operator(name, overload))
            self.operator_index[key] = len(self.operators) - 1
        return self.operator_index[key]

    def instruction(self, args) -> None:
        if isinstance(args, schema.KernelCall) and self.node is not None:
            handle = self.node.meta.get(DEBUG_HANDLE)
            if handle is not None:
                self.debug.debug_handle_map[len(self.instructions)] = handle
        self.instructions.append(schema.Instruction(args))
        if self.emit_stacktrace:
            self.stacktrace.append(_frames(self.node))

    def schema_value(self, node: torch.fx.Node, index: int, arg: torch._C.Argument) -> Any:
        if index < len(node.args) and not arg.kwarg_only:
            return node.args[index]
        if arg.name in node.kwargs:
            return node.kwargs[arg.name]
        if arg.has_default_value():
            return arg.default_value
        raise node_error(node, f"argument '{arg.name}' is missing and has no default")

    def symbolic_result(self, node: torch.fx.Node) -> int:
        val = node.meta.get("val")
        if isinstance(val, (bool, torch.SymBool)):
            return self.add(schema.Bool(bool(val) if isinstance(val, bool) else False))
        if isinstance(val, (float, torch.SymFloat)):
            return self.add(schema.Double(float(val) if isinstance(val, float) else 0.0))
        # Runtime overwrites it; the upper bound is a harmless placeholder.
        return self.add(schema.Int(upper_bound(val, self.method, node)))

    def kernel_argument(self, value: Any, arg: torch._C.Argument) -> int:
        # The spec: None for a (non-optional) Tensor argument is an empty
        # tensor value, so kernels always find a Tensor there.
        if value is None and isinstance(arg.type, torch.TensorType):
            return self.add(schema.Tensor(scalar_type=schema.ScalarType.BYTE, sizes=[0],
                                          dim_order=[0]))
        return self.argument(value, arg.type, arg.N)

    def kernel_call(self, node: torch.fx.Node) -> None:
        op: OpOverload = node.target
        fn_schema = op._schema
        args = [self.kernel_argument(self.schema_value(node, i, arg), arg)
                for i, arg in enumerate(fn_schema.arguments)]
        if ops.is_out_variant(op):
            out_values = [self.node_value(a) for a in node.meta[OUT_ALLOCS]]
            if len(fn_schema.returns) == 1:
                args.append(self.argument(node.kwargs[ops.out_arguments(op)[0].name],
                                          fn_schema.returns[0].type))
                self.node_values[node] = args[-1] if len(out_values) == 1 else out_values
            else:
                # Several returns, or none (split_copy.Tensor_out and the like
                # return `()`): upstream's emitter appends the outs as one
                # TensorList after the out argument, and its runtime counts
                # that slot, so we write it too.
                args.append(self.add(schema.TensorList(out_values)))
                self.node_values[node] = out_values
                if len(out_values) > 1:
                    self.debug.instruction_id_to_num_outs_map[len(self.instructions)] = \
                        len(out_values)
        else:  # Computes a size: its result is an Int value the kernel writes.
            result = self.symbolic_result(node)
            args.append(result)
            self.node_values[node] = result
        self.instruction(schema.KernelCall(self.operator(*ops.operator_name(op)), args))

    def symbolic_call(self, node: torch.fx.Node) -> None:
        args = [self.argument(a, torch.IntType.get()) if isinstance(a, torch.fx.Node)
                else self.scalar(a) for a in node.args]
        result = self.symbolic_result(node)
        self.node_values[node] = result
        name, overload = ops.symbolic_operator_name(node.target)
        self.instruction(schema.KernelCall(self.operator(name, overload), args + [result]))

    def delegate_call(self, node: torch.fx.Node) -> None:
        lowered = getattr(self.method.graph_module, node.args[0].target)
        key = id(lowered)
        if key not in self.delegate_index:
            self.delegates.append(schema.BackendDelegate(
                id=lowered.backend_id,
                processed=schema.BackendDelegateDataReference(
                    schema.DataLocation.INLINE, self.state.add_blob(lowered.processed_bytes)),
                compile_specs=[schema.CompileSpec(s.key, bytes(s.value))
                               for s in lowered.compile_specs]))
            self.delegate_index[key] = len(self.delegates) - 1
        inputs = [self.argument(a, torch.TensorType.get()) for a in node.args[1:]]
        outputs = [self.node_value(a) for a in node.meta[OUT_ALLOCS]]
        self.node_values[node] = outputs
        index = len(self.instructions)
        self.instruction(schema.DelegateCall(self.delegate_index[key], inputs + outputs))
        self.debug.debug_handle_map[index] = list(lowered.partition_debug_handles)
        self.debug.instruction_id_to_num_outs_map[index] = len(outputs)
        # Every delegate call is named by its backend, so the Inspector can say
        # which backend ran an event; the inner map is the backend's, if any.
        backend_map = getattr(lowered, "debug_handle_map", None) or {}
        self.debug.delegate_map[index] = {
            "name": lowered.backend_id,
            "delegate_map": {k: sorted(v) if isinstance(v, (list, tuple, set)) else v
                             for k, v in backend_map.items()}}

    # --- Control flow (markers of passes/control_flow.py) ---------------------------

    def condition(self, pred: Any) -> int:
        """The value a JumpFalseCall tests: a Bool (a constant, or a SymBool
        computed by executorch_prim ops) or a one-element bool tensor."""
        index = self.argument(pred, torch.BoolType.get())
        value = self.values[index].val
        if isinstance(value, schema.Bool):
            return index
        if isinstance(value, schema.Tensor) and value.scalar_type == schema.ScalarType.BOOL:
            return index
        what = (f"a {value.scalar_type.name} tensor" if isinstance(value, schema.Tensor)
                else type(value).__name__)
        raise node_error(self.node, f"the predicate must be a bool or a bool tensor, not {what}")

    def jump(self, cond_index: int) -> int:
        """Appends a JumpFalseCall whose destination is set later; returns its index."""
        self.instruction(schema.JumpFalseCall(cond_index, -1))
        return len(self.instructions) - 1

    def land(self, jump_index: int) -> None:
        """Makes the JumpFalseCall at `jump_index` go to the next instruction emitted."""
        self.instructions[jump_index].instr_args.destination_instruction = len(self.instructions)

    def result_tensor(self, result: Any) -> Tuple[int, schema.Tensor]:
        index = self.argument(result, torch.TensorType.get())
        value = self.values[index].val
        if not isinstance(value, schema.Tensor):
            raise node_error(self.node, f"a branch returns a {type(value).__name__}; torch.cond "
                                        f"branches must return tensors")
        if value.allocation_info is None and value.data_buffer_idx == 0:
            raise node_error(self.node, "a branch result has no planned memory (is the cond's "
                                        "result a method output with alloc_graph_output=False?); "
                                        "cond results need planned memory, so set "
                                        "alloc_graph_output=True")
        return index, value

    def moves(self, results: Sequence[Any], outputs: List[int]) -> None:
        for result, out in zip(results, outputs):
            index, _ = self.result_tensor(result)
            self.instruction(schema.MoveCall(index, out))

    def control_flow(self, node: torch.fx.Node) -> None:
        """cond_begin: JumpFalseCall(pred) to the else branch. cond_else: the
        cond's result values (sharing the true results' storage, so they are
        valid before any run), MoveCalls of the true results into them, and a
        JumpFalseCall on a constant False over the else branch. cond_end:
        MoveCalls of the false results."""
        if node.target is control_flow.cond_begin:
            self.pending_jumps[node] = self.jump(self.condition(node.args[0]))
            self.node_values[node] = []
        elif node.target is control_flow.cond_else:
            begin, *results = node.args
            outputs = []
            for result in results:
                _, value = self.result_tensor(result)
                planned = value.allocation_info is not None
                outputs.append(self.add(dataclasses.replace(
                    value, sizes=list(value.sizes), dim_order=list(value.dim_order),
                    data_buffer_idx=0 if planned else value.data_buffer_idx,
                    extra_tensor_info=None)))
            self.moves(results, outputs)
            if self.false_index is None:
                self.false_index = self.add(schema.Bool(False))
            self.pending_jumps[node] = self.jump(self.false_index)
            self.land(self.pending_jumps.pop(begin))
            self.node_values[node] = outputs
        elif node.target is control_flow.cond_end:
            _, else_, *results = node.args
            outputs = self.node_value(else_)
            self.moves(results, outputs)
            self.land(self.pending_jumps.pop(else_))
            self.node_values[node] = outputs
        else:
            raise node_error(node, "is an unknown control flow marker")

    # --- The method ----------------------------------------------------------------

    def placeholder(self, node: torch.fx.Node) -> None:
        method = self.method
        val = node.meta.get("val")
        if node in method.constants:
            index = self.state.add_constant(method.constants[node])
            self.node_values[node] = self.add(self.tensor(node, method.constants[node], index))
        elif node in method.mutable_buffers:
            fqn, initial = method.mutable_buffers[node]
            index = self.state.add_mutable(initial)
            extra = schema.ExtraTensorInfo(mutable_data_segments_idx=0, fully_qualified_name=fqn)
            self.node_values[node] = self.add(self.tensor(node, val, index, extra))
        elif isinstance(val, torch.Tensor):
            self.node_values[node] = self.add(self.tensor(node, val))
        elif isinstance(val, (bool, int, float)):
            self.node_values[node] = self.scalar(val)
        else:
            raise node_error(node, f"inputs of type {type(val).__name__} are not supported")

    def emit(self) -> schema.ExecutionPlan:
        method = self.method
        outputs: List[int] = []
        for node in method.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self.placeholder(node)
            elif node.op == "get_attr":
                continue  # A lowered delegate module, read by its call.
            elif node.op == "output":
                for out in node.args[0]:
                    index = self.argument(out, torch.TensorType.get())
                    outputs.append(index)
            elif ops.is_alloc(node):
                self.node_values[node] = self.add(self.tensor(node, node.meta["val"]))
            elif node.target is operator.getitem:
                self.node_values[node] = self.node_value(node.args[0])[node.args[1]]
            elif ops.is_symbolic_function(node.target):
                self.symbolic_call(node)
            elif ops.is_delegate_call(node.target):
                self.delegate_call(node)
            elif control_flow.is_control_flow(node.target):
                self.control_flow(node)
            elif isinstance(node.target, OpOverload):
                self.kernel_call(node)
            else:
                raise node_error(node, "cannot be emitted (not an operator or delegate call)")
            for freed in node.meta.get(FREE_AFTER, ()):
                self.instruction(schema.FreeCall(self.node_value(freed)))
        inputs = [self.node_values[n] for n in method.user_inputs]
        memory = method.memory
        return schema.ExecutionPlan(
            name=method.name,
            container_meta_type=schema.ContainerMetadata(_encode_spec(method.in_spec),
                                                         _encode_spec(method.out_spec)),
            values=self.values,
            inputs=inputs,
            outputs=outputs,
            chains=[schema.Chain(instructions=self.instructions,
                                 stacktrace=self.stacktrace if self.emit_stacktrace else None)],
            operators=self.operators,
            delegates=self.delegates,
            non_const_buffer_sizes=[0] + (list(memory.arena_sizes) if memory else []))


def emit_method(method: MethodGraph, state: ProgramState, emit_stacktrace: bool = False,
                debug: Optional[Dict[str, MethodDebugInfo]] = None) -> schema.ExecutionPlan:
    """The ExecutionPlan of a memory-planned MethodGraph. Its constants,
    initial buffer values and delegate blobs are added to `state`; its
    debug handle maps go into `debug[method name]` when given."""
    emitter = _MethodEmitter(method, state, emit_stacktrace)
    plan = emitter.emit()
    if debug is not None:
        debug[method.name] = emitter.debug
    return plan


def emit_constant_method(name: str, value: Any, state: ProgramState) -> schema.ExecutionPlan:
    """A method with no inputs returning `value`: an int, float, bool, str,
    None, dtype/layout/memory format (as its Int code), tensor, or a nested
    list/tuple/dict of those, e.g. a model's maximum sequence length. As the
    reference tool chain does, nested values are flattened (pytree order)
    into one output each, and the structure is recorded as the plan's
    output container spec."""
    values: List[schema.EValue] = []

    def add(val) -> int:
        values.append(schema.EValue(val))
        return len(values) - 1

    def emit_one(v) -> int:
        if isinstance(v, torch.Tensor):
            try:
                scalar_type = ops.scalar_type(v.dtype)
            except KeyError as e:
                raise ExportError(f"constant method '{name}': {e.args[0]}") from None
            return add(schema.Tensor(scalar_type=scalar_type, sizes=list(v.shape),
                                     dim_order=list(range(v.dim())),
                                     data_buffer_idx=state.add_constant(v)))
        if v is None:
            return add(schema.Null())
        if isinstance(v, bool):
            return add(schema.Bool(v))
        if isinstance(v, int):
            return add(schema.Int(v))
        if isinstance(v, float):
            return add(schema.Double(v))
        if isinstance(v, str):
            return add(schema.String(v))
        code = ops.enum_code(v)
        if code is not None:
            return add(schema.Int(code))
        raise ExportError(f"constant method '{name}': cannot emit {type(v).__name__} values "
                          f"(expected int, float, bool, str, None, dtype, tensor, or "
                          f"lists/tuples/dicts of them)")

    leaves, spec = tree_flatten(value, is_leaf=lambda v: v is None)
    outputs = [emit_one(v) for v in leaves]
    return schema.ExecutionPlan(name=name, values=values, inputs=[], outputs=outputs,
                                container_meta_type=schema.ContainerMetadata(
                                    "", _encode_spec(spec)),
                                chains=[schema.Chain()], non_const_buffer_sizes=[0])


def emit_program(methods: Sequence[MethodGraph], constant_methods: Dict[str, Any],
                 emit_stacktrace: bool = False,
                 debug: Optional[Dict[str, MethodDebugInfo]] = None) -> ProgramData:
    """The whole program: one ExecutionPlan per method (in the order given),
    then the constant methods; constants shared across methods are stored
    once. `debug`, when given, receives each method's MethodDebugInfo."""
    state = ProgramState()
    plans = [emit_method(m, state, emit_stacktrace, debug) for m in methods]
    plans += [emit_constant_method(name, value, state) for name, value in constant_methods.items()]
    return ProgramData(program=schema.Program(execution_plan=plans), constants=state.constants,
                       mutable_data=state.mutable_data, delegate_blobs=state.delegate_blobs)

