"""Numeric debugging: each operator's runtime output (from the debug
buffer) against the same operator run in PyTorch (spec 4, numeric gap).

AOT side: the reference graph runs eagerly on the ETRecord's
representative inputs; every call_function output with a debug handle is
kept by handle (a handle shared by several nodes keeps the last, which is
what the source op produced). Runtime side: each operator event's logged
outputs, keyed by its handles. Keys that share handles are matched, and
the two values compared with a distance.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from torchlight.devtools.inspector._event_blocks import (DELEGATE_CALL, OPERATOR_CALL, Event,
                                                         EventBlock)
from torchlight.passes.debug_handles import DEBUG_HANDLE

DISTANCES = ("MSE", "L1", "SNR")


def _flat_args(ep: ExportedProgram, inputs: Sequence[Any]) -> List[Any]:
    """The graph's placeholders' values: lifted parameters, buffers and
    constants from the program, then the user inputs in order."""
    user = iter(inputs)
    args = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            try:
                args.append(next(user))
            except StopIteration:
                raise ValueError(f"the representative inputs have {len(inputs)} values, fewer "
                                 f"than the reference graph's user inputs") from None
        elif spec.target in ep.state_dict:
            args.append(ep.state_dict[spec.target])
        elif spec.target in ep.constants:
            args.append(ep.constants[spec.target])
        else:
            raise ValueError(f"the reference graph's input '{spec.target}' has no value in the "
                             f"program")
    return args


class _Capture(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__(gm)
        self.by_handle: Dict[int, Tuple[Any, torch.fx.Node]] = {}

    def run_node(self, node: torch.fx.Node):
        result = super().run_node(node)
        handle = node.meta.get(DEBUG_HANDLE)
        if node.op == "call_function" and handle is not None and node.target is not operator.getitem:
            self.by_handle[handle] = (result, node)
        return result


def aot_outputs(ep: ExportedProgram, inputs: Sequence[Any]) -> Dict[int, Tuple[Any, torch.fx.Node]]:
    """Handle -> (output, node) of the reference graph run on `inputs`."""
    capture = _Capture(ep.graph_module)
    with torch.no_grad():
        capture.run(*_flat_args(ep, inputs))
    return capture.by_handle


def _as_float64(value) -> torch.Tensor:
    t = torch.as_tensor(value).detach().to(torch.float64)
    return torch.nan_to_num(t, nan=0.0)


def distance(aot, runtime, kind: str) -> float:
    """MSE = mean((a-b)^2), L1 = sum|a-b|, SNR = 10 log10(mean(a^2) /
    mean((a-b)^2)) in dB, with a the AOT value; float64, NaN read as 0."""
    if kind not in DISTANCES:
        raise ValueError(f"unknown distance '{kind}' (expected one of {', '.join(DISTANCES)})")
    a, b = _as_float64(aot), _as_float64(runtime)
    if a.shape != b.shape:
        if a.numel() != b.numel():
            raise ValueError(f"cannot compare shapes {tuple(a.shape)} and {tuple(b.shape)}")
        b = b.reshape(a.shape)
    diff = a - b
    if kind == "MSE":
        return float(torch.mean(diff * diff)) if diff.numel() else 0.0
    if kind == "L1":
        return float(torch.sum(diff.abs()))
    noise = float(torch.mean(diff * diff)) if diff.numel() else 0.0
    signal = float(torch.mean(a * a)) if a.numel() else 0.0
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


@dataclass
class _RuntimeOp:
    handles: Tuple[int, ...]
    event: Event
    outputs: List[Any]
    num_outputs: int


def _handles_tuple(handles) -> Tuple[int, ...]:
    if handles is None:
        return ()
    if isinstance(handles, int):
        return (handles,)
    return tuple(int(h) for h in handles)


def runtime_outputs(block: EventBlock, num_outs: Dict[str, int]) -> List[_RuntimeOp]:
    """The operator events with logged values, one per handle key (the
    latest instruction wins); a DELEGATE_CALL is dropped when inner events of
    its delegate cover its handles."""
    by_instruction: Dict[int, List[Event]] = {}
    for e in block.events:
        if e.debug_data and e.op_types and e._instruction_id is not None:
            by_instruction.setdefault(e._instruction_id, []).append(e)
    chosen: Dict[Tuple[int, ...], Tuple[int, _RuntimeOp]] = {}
    for instruction, events in by_instruction.items():
        # OPERATOR_CALL repeats its kernel's event; use it only when alone.
        named = [e for e in events if e.name != OPERATOR_CALL] or events
        inner = {h for e in named if e.is_delegated_op for h in _handles_tuple(e.debug_handles)}
        for e in named:
            handles = _handles_tuple(e.debug_handles)
            if not handles:
                continue
            if e.name == DELEGATE_CALL and set(handles) <= inner:
                continue
            outs = 1 if e.is_delegated_op else num_outs.get(str(instruction), 1)
            op = _RuntimeOp(handles, e, list(e.debug_data), outs)
            previous = chosen.get(handles)
            if previous is None or previous[0] <= instruction:
                chosen[handles] = (instruction, op)
    # Keys that overlap: the later instruction's value stands for them all.
    ops = sorted(chosen.values(), key=lambda item: item[0])
    kept: List[Tuple[int, _RuntimeOp]] = []
    for instruction, op in ops:
        kept = [(i, o) for i, o in kept if not set(o.handles) & set(op.handles)] + \
               [(instruction, op)]
    return [op for _, op in sorted(kept, key=lambda item: item[0])]


def _pick(values: List[Any], index: int, like: Any):
    """Runtime value `index` counted from the end; in a list, the element
    shaped like the AOT value."""
    value = values[index] if -len(values) <= index < len(values) else None
    if isinstance(value, list) and value:
        if isinstance(like, torch.Tensor):
            for item in value:
                if isinstance(item, torch.Tensor) and item.shape == like.shape \
                        and item.dtype == like.dtype:
                    return item
        return value[-1]
    return value


def _op_name(node: torch.fx.Node) -> str:
    return str(node.target) if not callable(node.target) or hasattr(node.target, "_schema") \
        else getattr(node.target, "__name__", str(node.target))


def numeric_gap_rows(aot: Dict[int, Tuple[Any, torch.fx.Node]], runtime: List[_RuntimeOp],
                     kind: str) -> List[Dict[str, Any]]:
    rows = []
    for op in runtime:
        matched = [h for h in op.handles if h in aot]
        if not matched:
            continue
        aot_values, runtime_values, gaps = [], [], []
        for i in range(op.num_outputs):
            handle = op.handles[-(i + 1)] if len(op.handles) > i else op.handles[-1]
            if handle not in aot:
                continue
            expected = aot[handle][0]
            if isinstance(expected, (tuple, list)):
                expected = expected[-(i + 1)] if len(expected) > i else expected[-1]
            actual = _pick(op.outputs, -(i + 1), expected)
            if actual is None or not isinstance(expected, torch.Tensor):
                continue
            aot_values.append(expected)
            runtime_values.append(actual)
            gaps.append(distance(expected, actual, kind))
        if not gaps:
            continue
        nodes = [aot[h][1] for h in matched]
        rows.append({
            "aot_debug_handle": tuple(matched),
            "aot_ops": [_op_name(n) for n in nodes],
            "aot_intermediate_output": aot_values[0] if len(aot_values) == 1 else aot_values,
            "runtime_ops": list(op.event.op_types) or [op.event.name],
            "runtime_debug_handle": op.handles,
            "runtime_intermediate_output": (runtime_values[0] if len(runtime_values) == 1
                                            else runtime_values),
            "gap": gaps,
            "stacktraces": {n.name: n.meta.get("stack_trace") for n in nodes},
            "instruction_id": op.event._instruction_id,
            "runtime_event_name": op.event.name,
        })
    return rows
