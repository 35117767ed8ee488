"""ETDump runs -> EventBlocks of Events with timing statistics (spec 4).

Events of one RunData are grouped by (instruction, chain, delegate ids);
each profile event of a group is one Event, carrying the group's debug
values. Runs whose event signatures are equal (the same method executed
again) merge into one block, each run adding one timing sample per event.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from torchlight.devtools.etdump import schema_flatcc as fb
from torchlight.pte.schema import ScalarType


class TimeScale(str, enum.Enum):
    NS = "ns"
    US = "us"
    MS = "ms"
    S = "s"
    CYCLES = "cycles"


_TICKS_PER_SECOND = {TimeScale.NS: 1e9, TimeScale.US: 1e6, TimeScale.MS: 1e3, TimeScale.S: 1.0,
                     TimeScale.CYCLES: 1.0}


def time_scale_factor(source: TimeScale, target: TimeScale) -> float:
    """What a source duration is divided by to express it in `target`."""
    source, target = TimeScale(source), TimeScale(target)
    if (source == TimeScale.CYCLES) != (target == TimeScale.CYCLES):
        raise ValueError(f"cannot convert {source.value} to {target.value}: cycles convert only "
                         f"to cycles")
    return _TICKS_PER_SECOND[source] / _TICKS_PER_SECOND[target]


# Names of the method-level spans the runtime writes; never tied to graph nodes.
FRAMEWORK_EVENTS = ("Method::init", "Program::load_method", "Method::execute")
OPERATOR_CALL = "OPERATOR_CALL"
DELEGATE_CALL = "DELEGATE_CALL"


@dataclass
class PerfData:
    """Timing samples of one event, one per merged run, in the target scale."""

    raw: List[float]

    @property
    def p10(self) -> float:
        return float(np.percentile(self.raw, 10))

    @property
    def p50(self) -> float:
        return float(np.percentile(self.raw, 50))

    @property
    def p90(self) -> float:
        return float(np.percentile(self.raw, 90))

    @property
    def avg(self) -> float:
        return float(np.mean(self.raw))

    @property
    def min(self) -> float:
        return float(np.min(self.raw))

    @property
    def max(self) -> float:
        return float(np.max(self.raw))


@dataclass
class Event:
    """One operator, delegate or framework span of a block."""

    name: str
    perf_data: Optional[PerfData] = None
    op_types: List[str] = field(default_factory=list)
    delegate_debug_identifier: Optional[Union[int, str]] = None
    debug_handles: Optional[Union[int, Sequence[int]]] = None
    stack_traces: Dict[str, str] = field(default_factory=dict)
    module_hierarchy: Dict[str, Dict] = field(default_factory=dict)
    is_delegated_op: Optional[bool] = None
    delegate_backend_name: Optional[str] = None
    debug_data: List[Any] = field(default_factory=list)
    _instruction_id: Optional[int] = None
    _chain_index: Optional[int] = None
    _delegate_debug_metadatas: List[bytes] = field(default_factory=list)
    _start_time: List[int] = field(default_factory=list)
    _delegate_metadata_parser: Optional[Callable[[List[bytes]], Any]] = None

    @property
    def start_time(self) -> List[int]:
        """Raw start ticks, one per sample."""
        return self._start_time

    @property
    def instruction_id(self) -> Optional[int]:
        return self._instruction_id

    @property
    def delegate_debug_metadatas(self):
        if self._delegate_metadata_parser is not None:
            return self._delegate_metadata_parser(self._delegate_debug_metadatas)
        return self._delegate_debug_metadatas


@dataclass
class EventBlock:
    """One kind of run (a method load, or executions of a method)."""

    name: str
    events: List[Event] = field(default_factory=list)
    source_time_scale: TimeScale = TimeScale.NS
    target_time_scale: TimeScale = TimeScale.MS
    bundled_input_index: Optional[int] = None
    run_output: Optional[List[Any]] = None
    reference_output: Optional[Any] = None

    def to_dataframe(self, include_units: bool = False,
                     include_delegate_debug_data: bool = False):
        """One row per event (pandas)."""
        import pandas as pd

        unit = f" ({self.target_time_scale.value})" if include_units else ""
        rows = []
        for e in self.events:
            perf = e.perf_data
            row = {"event_block_name": self.name, "event_name": e.name,
                   f"raw{unit}": perf.raw if perf else None}
            for stat in ("p10", "p50", "p90", "avg", "min", "max"):
                row[f"{stat}{unit}"] = getattr(perf, stat) if perf else None
            row.update(op_types=e.op_types,
                       delegate_debug_identifier=e.delegate_debug_identifier,
                       stack_traces=e.stack_traces, module_hierarchy=e.module_hierarchy,
                       is_delegated_op=e.is_delegated_op,
                       delegate_backend_name=e.delegate_backend_name,
                       debug_data=e.debug_data)
            if include_delegate_debug_data:
                row["delegate_debug_metadatas"] = e.delegate_debug_metadatas
            rows.append(row)
        return pd.DataFrame(rows)


# --- Debug values -------------------------------------------------------------

_DTYPES = {ScalarType.BYTE: torch.uint8, ScalarType.CHAR: torch.int8,
           ScalarType.SHORT: torch.int16, ScalarType.INT: torch.int32,
           ScalarType.LONG: torch.int64, ScalarType.HALF: torch.float16,
           ScalarType.FLOAT: torch.float32, ScalarType.DOUBLE: torch.float64,
           ScalarType.BOOL: torch.bool, ScalarType.BFLOAT16: torch.bfloat16,
           ScalarType.BITS16: torch.int16, ScalarType.UINT16: torch.uint16}


class DebugBufferError(ValueError):
    """A logged tensor does not fit the debug buffer or has an unknown dtype."""


def _tensor(t: fb.Tensor, buffer: Optional[bytes], where: str) -> torch.Tensor:
    dtype = _DTYPES.get(t.scalar_type)
    if dtype is None:
        raise DebugBufferError(f"{where}: tensor of scalar type {t.scalar_type!r} cannot be read")
    sizes = [int(s) for s in (t.sizes or [])]
    if any(s < 0 for s in sizes):
        raise DebugBufferError(f"{where}: tensor sizes {sizes} are negative")
    if buffer is None:
        return torch.zeros(sizes, dtype=dtype)  # Shape only, as upstream without a buffer.
    count = int(np.prod(sizes)) if sizes else 1
    nbytes = count * torch.empty((), dtype=dtype).element_size()
    if nbytes == 0:
        return torch.zeros(sizes, dtype=dtype)
    if t.offset < 0 or t.offset + nbytes > len(buffer):
        raise DebugBufferError(f"{where}: tensor of {nbytes} bytes at offset {t.offset} does "
                               f"not fit the debug buffer ({len(buffer)} bytes)")
    data = bytearray(buffer[t.offset:t.offset + nbytes])
    return torch.frombuffer(data, dtype=dtype).reshape(sizes).clone()


def inflate_value(value: Optional[fb.Value], buffer: Optional[bytes], where: str):
    """A logged Value as Python: a tensor (read from the debug buffer),
    a list of tensors, an int, a float or a bool."""
    if value is None:
        return None
    kind = value.val
    if kind == fb.ValueType.Tensor and value.tensor is not None:
        return _tensor(value.tensor, buffer, where)
    if kind == fb.ValueType.TensorList and value.tensor_list is not None:
        return [_tensor(t, buffer, f"{where}[{i}]")
                for i, t in enumerate(value.tensor_list.tensors or [])]
    if kind == fb.ValueType.Int and value.int_value is not None:
        return value.int_value.int_val
    if kind == fb.ValueType.Float and value.float_value is not None:
        return value.float_value.float_val
    if kind == fb.ValueType.Double and value.double_value is not None:
        return value.double_value.double_val
    if kind == fb.ValueType.Bool and value.bool_value is not None:
        return value.bool_value.bool_val
    return None


# --- Blocks from runs -----------------------------------------------------------


def _none_if_unset(value):
    return None if value in (-1, "", None) else value


def elapsed_ticks(start: int, end: int) -> int:
    """end - start, reading a 32-bit counter that wrapped once as such."""
    if start > end and start < 2**32 and end < 2**32:
        return (2**32 - 1 - start) + end
    return end - start


@dataclass
class _Group:
    profile: List[fb.ProfileEvent] = field(default_factory=list)
    debug: List[fb.DebugEvent] = field(default_factory=list)


def _debug_signature(debug: List[fb.DebugEvent]) -> Optional[Tuple]:
    if not debug:
        return None
    d = debug[0]
    return (d.name or "", _none_if_unset(d.instruction_id),
            _none_if_unset(d.delegate_debug_id_int), _none_if_unset(d.delegate_debug_id_str))


def _run_entries(run: fb.RunData):
    """(event signature -> (profile event or None, debug events)), run outputs."""
    groups: "OrderedDict[Tuple, _Group]" = OrderedDict()
    outputs: List[fb.DebugEvent] = []
    for event in run.events or []:
        if event.profile_event is not None:
            p = event.profile_event
            key = (p.instruction_id, p.chain_index, p.delegate_debug_id_int,
                   p.delegate_debug_id_str)
            groups.setdefault(key, _Group()).profile.append(p)
        elif event.debug_event is not None:
            d = event.debug_event
            entry = d.debug_entry
            if entry is not None and entry.output is not None and entry.output.bool_val:
                outputs.append(d)
                continue
            key = (d.instruction_id, d.chain_index, d.delegate_debug_id_int,
                   d.delegate_debug_id_str)
            groups.setdefault(key, _Group()).debug.append(d)
    entries: "OrderedDict[Tuple, Tuple]" = OrderedDict()
    for group in groups.values():
        debug_sig = _debug_signature(group.debug)
        if group.profile:
            for p in group.profile:
                sig = ((p.name or "", _none_if_unset(p.instruction_id),
                        _none_if_unset(p.delegate_debug_id_int),
                        _none_if_unset(p.delegate_debug_id_str)), debug_sig)
                entries[sig] = (p, group.debug)  # A repeated signature overwrites.
        else:
            entries[(None, debug_sig)] = (None, group.debug)
    return entries, outputs


def event_blocks_from_etdump(etdump: fb.ETDump, source: TimeScale, target: TimeScale,
                             debug_buffer: Optional[bytes] = None,
                             delegate_time_scale_converter: Optional[Callable] = None,
                             delegate_metadata_parser: Optional[Callable] = None) \
        -> List[EventBlock]:
    factor = time_scale_factor(source, target)
    convert = delegate_time_scale_converter or (lambda name, t: t / factor)
    merged: "OrderedDict[Tuple, List]" = OrderedDict()
    for run in etdump.run_data or []:
        if not run.events:
            continue
        entries, outputs = _run_entries(run)
        signature = (run.name, tuple(entries), run.bundled_input_index)
        merged.setdefault(signature, []).append((entries, outputs))

    blocks = []
    for (name, signatures, bundled_index), runs in merged.items():
        first_entries, first_outputs = runs[0]
        events = []
        for sig in signatures:
            profile, debug = first_entries[sig]
            where = f"block '{name}'"
            samples, starts, metadata = [], [], []
            for entries, _ in runs:
                p, _ = entries[sig]
                if p is None:
                    continue
                delegate_id = _none_if_unset(p.delegate_debug_id_int)
                if delegate_id is None:
                    delegate_id = _none_if_unset(p.delegate_debug_id_str)
                if delegate_id is not None:
                    label = str(delegate_id)
                    samples.append(convert(label, p.end_time) - convert(label, p.start_time))
                else:
                    samples.append(elapsed_ticks(p.start_time, p.end_time) / factor)
                starts.append(p.start_time)
                metadata.append(p.delegate_debug_metadata or b"")
            if profile is not None:
                delegate_id = _none_if_unset(profile.delegate_debug_id_int)
                if delegate_id is None:
                    delegate_id = _none_if_unset(profile.delegate_debug_id_str)
                instruction, chain = profile.instruction_id, profile.chain_index
                event_name = str(delegate_id) if delegate_id is not None else (profile.name or "")
            else:
                d = debug[0]
                delegate_id = _none_if_unset(d.delegate_debug_id_int)
                if delegate_id is None:
                    delegate_id = _none_if_unset(d.delegate_debug_id_str)
                instruction, chain = d.instruction_id, d.chain_index
                event_name = str(delegate_id) if delegate_id is not None else (d.name or "")
            where = f"block '{name}', event '{event_name}' (instruction {instruction})"
            events.append(Event(
                name=event_name,
                perf_data=PerfData(samples) if samples else None,
                delegate_debug_identifier=delegate_id,
                is_delegated_op=delegate_id is not None,
                debug_data=[inflate_value(d.debug_entry, debug_buffer, where) for d in debug],
                _instruction_id=_none_if_unset(instruction),
                _chain_index=chain,
                _delegate_debug_metadatas=metadata if delegate_id is not None else [],
                _start_time=starts,
                _delegate_metadata_parser=delegate_metadata_parser))
        run_output = None
        if first_outputs:
            run_output = [inflate_value(d.debug_entry, debug_buffer, f"block '{name}' output")
                          for d in first_outputs]
        blocks.append(EventBlock(name=name, events=events, source_time_scale=TimeScale(source),
                                 target_time_scale=TimeScale(target),
                                 bundled_input_index=_none_if_unset(bundled_index),
                                 run_output=run_output))
    return blocks
