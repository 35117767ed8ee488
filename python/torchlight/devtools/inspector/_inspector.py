"""The Inspector: ETDump timings and values joined with ETRecord's graphs
(upstream's executorch.devtools.Inspector, spec section 4)."""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Any, Callable, Dict, IO, List, Optional, Union

import torch
from torch.export import ExportedProgram

from torchlight.devtools.etdump.serialize import deserialize_from_etdump_flatcc
from torchlight.devtools.etrecord import ETRecord, parse_etrecord
from torchlight.devtools.inspector import _numeric_gap
from torchlight.devtools.inspector._event_blocks import (DELEGATE_CALL, FRAMEWORK_EVENTS,
                                                         OPERATOR_CALL, EventBlock, TimeScale,
                                                         event_blocks_from_etdump)
from torchlight.passes.debug_handles import DEBUG_HANDLE

log = logging.getLogger(__name__)

EDGE_DIALECT_GRAPH_KEY = "edge_dialect_graph_module"


def _nodes_by_handle(gm: torch.fx.GraphModule, found: Dict[int, List[torch.fx.Node]]) -> None:
    for node in gm.graph.nodes:
        handle = node.meta.get(DEBUG_HANDLE)
        if handle is not None and node.op == "call_function":
            found.setdefault(int(handle), []).append(node)
        if node.op == "get_attr":
            sub = getattr(gm, node.target, None)
            sub = getattr(sub, "original_module", sub)
            if isinstance(sub, torch.fx.GraphModule):
                _nodes_by_handle(sub, found)


def _innermost_module(hierarchy: Dict[str, Dict]) -> str:
    """The deepest module path of an event's first node ("" for the model itself)."""
    for stack in hierarchy.values():
        if stack:
            path, _ = list(stack.values())[-1]
            return str(path)
    return ""


def _source_line(traces: Dict[str, Optional[str]]) -> str:
    """`file:line` of the innermost frame of an event's first stack trace."""
    for trace in traces.values():
        frames = re.findall(r'File "([^"]+)", line (\d+)', trace or "")
        if frames:
            path, line = frames[-1]
            return f"{os.path.basename(path)}:{line}"
    return ""


def _op_type(node: torch.fx.Node) -> str:
    return _numeric_gap._op_name(node)


class Inspector:
    """Reads an ETDump (and optionally an ETRecord and a debug buffer).

    etdump_path / etdump_data: the trace (.etdp, size prefix or not).
    etrecord: an ETRecord or the path of one; names each event's operator,
      source lines and module path, and enables calculate_numeric_gap.
    source_time_scale / target_time_scale: the trace's tick unit and the
      unit of the statistics (default ns -> ms).
    debug_buffer_path: the buffer that logged tensors' offsets point into.
    delegate_metadata_parser(list of bytes) and
    delegate_time_scale_converter(event name, ticks) customise delegate events.
    enable_module_hierarchy: fill Event.module_hierarchy (upstream defaults
      to False; here True, since find_total_for_module needs it).
    """

    def __init__(self, etdump_path: Optional[Union[str, os.PathLike]] = None,
                 etdump_data: Optional[bytes] = None,
                 etrecord: Optional[Union[ETRecord, str, os.PathLike]] = None,
                 source_time_scale: Union[TimeScale, str] = TimeScale.NS,
                 target_time_scale: Union[TimeScale, str] = TimeScale.MS,
                 debug_buffer_path: Optional[Union[str, os.PathLike]] = None,
                 delegate_metadata_parser: Optional[Callable[[List[bytes]], Any]] = None,
                 delegate_time_scale_converter: Optional[Callable[[str, int], float]] = None,
                 enable_module_hierarchy: bool = True,
                 reference_graph_name: Optional[str] = None) -> None:
        if (etdump_path is None) == (etdump_data is None):
            raise ValueError("give exactly one of etdump_path and etdump_data")
        if etdump_data is None:
            with open(etdump_path, "rb") as f:
                etdump_data = f.read()
        self._etdump = deserialize_from_etdump_flatcc(etdump_data)
        debug_buffer = None
        if debug_buffer_path is not None:
            with open(debug_buffer_path, "rb") as f:
                debug_buffer = f.read()
        self._source_time_scale = TimeScale(source_time_scale)
        self._target_time_scale = TimeScale(target_time_scale)
        self.event_blocks: List[EventBlock] = event_blocks_from_etdump(
            self._etdump, self._source_time_scale, self._target_time_scale, debug_buffer,
            delegate_time_scale_converter, delegate_metadata_parser)
        if isinstance(etrecord, (str, os.PathLike)):
            etrecord = parse_etrecord(etrecord)
        self._etrecord: Optional[ETRecord] = etrecord
        self._reference_graph_name = reference_graph_name
        self._graphs: Dict[str, ExportedProgram] = {}
        if etrecord is not None:
            self._associate(enable_module_hierarchy)

    # --- Joining with ETRecord -------------------------------------------------

    def _associate(self, module_hierarchy: bool) -> None:
        record = self._etrecord
        edge = record.edge_programs()
        if "forward" in edge:
            self._graphs[EDGE_DIALECT_GRAPH_KEY] = edge["forward"]
        self._graphs.update(record.graph_map)
        nodes: Dict[int, List[torch.fx.Node]] = {}
        for ep in self._graphs.values():
            _nodes_by_handle(ep.graph_module, nodes)

        handle_map = (record._debug_handle_map or {}).get("forward", {})
        delegate_map = (record._delegate_map or {}).get("forward", {})
        num_outs = (record._instruction_id_to_num_outs_map or {}).get("forward", {})
        reference = (record._reference_outputs or {}).get("forward")
        for block in self.event_blocks:
            if reference:
                # Upstream's rule: an unset index (-1) selects the last case.
                index = block.bundled_input_index if block.bundled_input_index is not None else -1
                if -len(reference) <= index < len(reference):
                    block.reference_output = reference[index]
            for event in block.events:
                instruction = event._instruction_id
                key = str(instruction) if instruction is not None else None
                if key is None or key not in handle_map:
                    continue
                handles = handle_map[key]
                delegate = delegate_map.get(key)
                if event.is_delegated_op:
                    if delegate is not None:
                        event.delegate_backend_name = delegate.get("name")
                        inner = self._delegate_handles(delegate.get("delegate_map", {}),
                                                       event.delegate_debug_identifier)
                        if inner is not None:
                            handles = inner
                    else:
                        log.warning("instruction %s has no delegate map; delegate event %s gets "
                                    "the whole delegate call's debug handles", key, event.name)
                elif event.name == DELEGATE_CALL and delegate is not None:
                    event.delegate_backend_name = delegate.get("name")
                event.debug_handles = handles
                if event.name in FRAMEWORK_EVENTS:
                    continue
                for handle in _numeric_gap._handles_tuple(handles):
                    for node in nodes.get(handle, []):
                        event.op_types.append(_op_type(node))
                        event.stack_traces[node.name] = node.meta.get("stack_trace")
                        if module_hierarchy:
                            event.module_hierarchy[node.name] = node.meta.get("nn_module_stack")

    @staticmethod
    def _delegate_handles(mapping: Dict, identifier):
        """The handles of a delegate event: by its id as given, as a string,
        or (XNNPACK-style names) by a key contained in it."""
        if identifier is None:
            return None
        for key in (identifier, str(identifier)):
            if key in mapping:
                return mapping[key]
        for key, value in mapping.items():
            if str(key) in str(identifier):
                return value
        return None

    # --- Tables ---------------------------------------------------------------

    def to_dataframe(self, include_units: bool = True, include_delegate_debug_data: bool = False):
        """Every event of every block, one row each (pandas)."""
        import pandas as pd

        frames = [b.to_dataframe(include_units, include_delegate_debug_data)
                  for b in self.event_blocks]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def print_data_tabular(self, file: IO[str] = sys.stdout, include_units: bool = True,
                           include_delegate_debug_data: bool = False) -> None:
        """A console table: one row per event with its statistics, operator,
        innermost source module and source line. OPERATOR_CALL rows are left
        out (each is its kernel's time plus dispatch overhead, so it would
        count the operator twice). to_dataframe() has every column."""
        import pandas as pd

        unit = f" ({self._target_time_scale.value})" if include_units else ""
        rows = []
        for block in self.event_blocks:
            for e in block.events:
                if e.name == OPERATOR_CALL:
                    continue
                perf = e.perf_data
                row = {"event_block_name": block.name, "event_name": e.name,
                       "runs": len(perf.raw) if perf else 0}
                for stat in ("p10", "p50", "p90", "avg", "min", "max"):
                    row[stat + unit] = getattr(perf, stat) if perf else None
                row.update(op_types=", ".join(e.op_types),
                           module=_innermost_module(e.module_hierarchy),
                           source=_source_line(e.stack_traces),
                           delegate_debug_identifier=("" if e.delegate_debug_identifier is None
                                                      else e.delegate_debug_identifier),
                           delegate_backend_name=e.delegate_backend_name or "")
                if include_delegate_debug_data:
                    row["delegate_debug_metadatas"] = e.delegate_debug_metadatas
                rows.append(row)
        with pd.option_context("display.max_rows", None, "display.max_columns", None,
                               "display.width", 250, "display.max_colwidth", 60):
            print(pd.DataFrame(rows).to_string(index=False), file=file)

    def find_total_for_module(self, module_name: str) -> float:
        """Sum of the average times of the events whose nodes sit in a module
        whose name (nn_module_stack key or path) contains `module_name`."""
        total = 0.0
        for block in self.event_blocks:
            for event in block.events:
                if event.name == OPERATOR_CALL or event.perf_data is None:
                    continue
                for stack in event.module_hierarchy.values():
                    if stack and any(module_name in key or module_name in str(path)
                                     for key, (path, _) in stack.items()):
                        total += event.perf_data.avg
                        break
        return total

    def get_exported_program(self, graph: Optional[str] = None) -> Optional[ExportedProgram]:
        """The edge program (default) or the recorded graph named `graph`."""
        if self._etrecord is None:
            return None
        return self._graphs.get(graph or EDGE_DIALECT_GRAPH_KEY)

    # --- Numeric debugging -------------------------------------------------------

    def _reference_graph(self) -> ExportedProgram:
        record = self._etrecord
        if self._reference_graph_name is not None:
            if self._reference_graph_name not in self._graphs:
                raise ValueError(f"no recorded graph '{self._reference_graph_name}' (have: "
                                 f"{', '.join(sorted(self._graphs))})")
            return self._graphs[self._reference_graph_name]
        aten = record.exported_program
        if aten is not None and any(n.meta.get(DEBUG_HANDLE) is not None
                                    for n in aten.graph.nodes):
            return aten
        return self._graphs[EDGE_DIALECT_GRAPH_KEY]

    def _debug_block(self) -> EventBlock:
        blocks = [b for b in self.event_blocks if any(e.debug_data for e in b.events)]
        if not blocks:
            raise ValueError("the ETDump has no logged intermediate outputs; run with a debug "
                             "buffer (and pass debug_buffer_path) to compare values")
        return blocks[-1]

    def calculate_numeric_gap(self, distance: str = "MSE"):
        """Per operator, the runtime's intermediate output against the
        reference graph's, run in PyTorch on the ETRecord's representative
        inputs. A dataframe with columns aot_debug_handle, aot_ops,
        aot_intermediate_output, runtime_ops, runtime_debug_handle,
        runtime_intermediate_output, gap (one value per output), stacktraces."""
        import pandas as pd

        if distance not in _numeric_gap.DISTANCES:
            raise ValueError(f"unknown distance '{distance}' (expected one of "
                             f"{', '.join(_numeric_gap.DISTANCES)})")
        record = self._etrecord
        if record is None:
            raise ValueError("calculate_numeric_gap needs an ETRecord")
        if record._representative_inputs is None:
            raise ValueError("the ETRecord has no representative inputs (generate it with a "
                             "bundled program, or call update_representative_inputs)")
        aot = _numeric_gap.aot_outputs(self._reference_graph(), record._representative_inputs)
        num_outs = (record._instruction_id_to_num_outs_map or {}).get("forward", {})
        runtime = _numeric_gap.runtime_outputs(self._debug_block(), num_outs)
        rows = _numeric_gap.numeric_gap_rows(aot, runtime, distance)
        columns = ["aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops",
                   "runtime_debug_handle", "runtime_intermediate_output", "gap", "stacktraces",
                   "instruction_id", "runtime_event_name"]
        return pd.DataFrame(rows, columns=columns)

    def find_first_numeric_gap(self, tolerance: float, distance: str = "MSE"):
        """The first operator, in execution order, whose gap is beyond
        `tolerance` (above it for MSE and L1, below it for SNR, which is
        higher when closer), as a row of calculate_numeric_gap's table; None
        when every operator is within tolerance."""
        df = self.calculate_numeric_gap(distance)
        if df.empty:
            return None
        df = df.sort_values("instruction_id", kind="stable")
        for _, row in df.iterrows():
            gaps = row["gap"]
            bad = any(g < tolerance for g in gaps) if distance == "SNR" else \
                any(g > tolerance for g in gaps)
            if bad:
                return row
        return None
