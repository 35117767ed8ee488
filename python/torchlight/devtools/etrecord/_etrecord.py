"""ETRecord: what the export step knew, for the Inspector (spec section 3).

A ZIP archive (entries stored, not compressed) that holds an empty
ETRECORD_V0 marker, the edge-dialect program of every method, optionally
the ATen exported program and other recorded graphs, each as four entries
(see _serde.py), and JSON maps from instruction index to debug handle.
ETDump events carry instruction indices; these maps and the graphs' node
metadata turn them into operators, source lines and module paths.
"""

from __future__ import annotations

import copy
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

import torch
from torch.export import ExportedProgram

from torchlight.devtools.etrecord import _serde
from torchlight.passes.debug_handles import DEBUG_HANDLE, propagate_back, source_identifier

MAGIC = "ETRECORD_V0"
EXPORTED_PROGRAM = "exported_program"
EDGE_PROGRAM = "edge_dialect_exported_program"
DEBUG_HANDLE_MAP = "debug_handle_map"
DELEGATE_MAP = "delegate_map"
NUM_OUTS_MAP = "instruction_id_to_num_outs_map"
REFERENCE_OUTPUTS = "reference_outputs"
REPRESENTATIVE_INPUTS = "representative_inputs"
EXPORT_GRAPH_ID = "export_graph_id"
COMPANIONS = ("_state_dict", "_constants", "_example_inputs")
RESERVED = (MAGIC, EXPORTED_PROGRAM, EDGE_PROGRAM, DEBUG_HANDLE_MAP, DELEGATE_MAP, NUM_OUTS_MAP,
            REFERENCE_OUTPUTS, REPRESENTATIVE_INPUTS, EXPORT_GRAPH_ID)

PathLike = Union[str, os.PathLike]


class ETRecordError(ValueError):
    """A file is not an ETRecord, or an ETRecord cannot be written or read."""


def _json_keys(mapping: Optional[Dict]) -> Optional[Dict]:
    """The map as it reads back from JSON: every key a string."""
    return None if mapping is None else json.loads(json.dumps(mapping))


@dataclass
class ETRecord:
    """The parsed record. `edge_dialect_program` is one program when the
    model has one method, else a dict by method; maps are keyed by method
    and then by instruction index as a string (as stored in JSON)."""

    exported_program: Optional[ExportedProgram] = None
    export_graph_id: Optional[int] = None
    edge_dialect_program: Optional[Union[ExportedProgram, Dict[str, ExportedProgram]]] = None
    graph_map: Dict[str, ExportedProgram] = field(default_factory=dict)
    _debug_handle_map: Optional[Dict[str, Dict[str, Any]]] = None
    _delegate_map: Optional[Dict[str, Dict[str, Any]]] = None
    _instruction_id_to_num_outs_map: Optional[Dict[str, Dict[str, int]]] = None
    _reference_outputs: Optional[Dict[str, List[List[Any]]]] = None
    _representative_inputs: Optional[List[Any]] = None

    def __post_init__(self) -> None:
        self._debug_handle_map = _json_keys(self._debug_handle_map)
        self._delegate_map = _json_keys(self._delegate_map)
        self._instruction_id_to_num_outs_map = _json_keys(self._instruction_id_to_num_outs_map)

    def edge_programs(self) -> Dict[str, ExportedProgram]:
        """The edge-dialect programs by method name."""
        if isinstance(self.edge_dialect_program, ExportedProgram):
            return {"forward": self.edge_dialect_program}
        return dict(self.edge_dialect_program or {})

    def update_representative_inputs(self, inputs) -> None:
        """Inputs (one test case of "forward") the numeric comparison runs."""
        self._representative_inputs = list(inputs)

    def update_reference_outputs(self, outputs: Dict[str, List[List[Any]]]) -> None:
        """Expected outputs per method and test case."""
        self._reference_outputs = {m: [list(case) for case in cases]
                                   for m, cases in outputs.items()}

    def save(self, path: Union[PathLike, io.BytesIO]) -> None:
        """Writes the ZIP. Raises ETRecordError without an edge program or a
        debug handle map (upstream refuses the same)."""
        if not self.edge_dialect_program:
            raise ETRecordError("cannot save an ETRecord without an edge dialect program")
        if self._debug_handle_map is None:
            raise ETRecordError("cannot save an ETRecord without a debug handle map (pass the "
                                "ExecutorchProgramManager to generate_etrecord)")
        for name in self.graph_map:
            clash = [r for r in RESERVED if r in name]
            if clash:
                raise ETRecordError(f"recorded module name '{name}' contains the reserved entry "
                                    f"name '{clash[0]}'")
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(MAGIC, "")
            if self.exported_program is not None:
                _write_program(z, EXPORTED_PROGRAM, self.exported_program)
            for method, ep in self.edge_programs().items():
                _write_program(z, f"{EDGE_PROGRAM}/{method}", ep)
            for name, ep in self.graph_map.items():
                _write_program(z, name, ep)
            z.writestr(DEBUG_HANDLE_MAP, json.dumps(self._debug_handle_map))
            if self._delegate_map is not None:
                z.writestr(DELEGATE_MAP, json.dumps(self._delegate_map))
            if self._instruction_id_to_num_outs_map is not None:
                z.writestr(NUM_OUTS_MAP, json.dumps(self._instruction_id_to_num_outs_map))
            if self._reference_outputs is not None:
                z.writestr(REFERENCE_OUTPUTS, _torch_bytes(self._reference_outputs))
            if self._representative_inputs is not None:
                z.writestr(REPRESENTATIVE_INPUTS, _torch_bytes(self._representative_inputs))
            if self.export_graph_id is not None:
                z.writestr(EXPORT_GRAPH_ID, json.dumps(self.export_graph_id))


def _torch_bytes(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def _write_program(z: zipfile.ZipFile, name: str, ep: ExportedProgram) -> None:
    try:
        parts = _serde.serialize_program(ep)
    except Exception as e:  # torch's serializer raises many kinds; name the program.
        raise ETRecordError(f"cannot serialize program '{name}' for the ETRecord: "
                            f"{type(e).__name__}: {e}") from e
    for suffix, data in zip(("",) + COMPANIONS, parts):
        z.writestr(name + suffix, data)


# --- Writing from the export pipeline ---------------------------------------------


def _programs_of(value, what: str) -> Dict[str, ExportedProgram]:
    """Method -> ExportedProgram of an ExportedProgram, a dict of them, or a
    program manager (edge or ExecuTorch)."""
    if isinstance(value, ExportedProgram):
        return {"forward": value}
    if isinstance(value, dict):
        return dict(value)
    programs = getattr(value, "_programs", None) or getattr(value, "_exported_programs", None)
    if isinstance(programs, dict) and programs:
        return dict(programs)
    raise ETRecordError(f"{what}: expected an ExportedProgram, a dict of them or a program "
                        f"manager, got {type(value).__name__}")


def _source_handles(programs: Dict[str, ExportedProgram]) -> Dict[str, int]:
    """Source identifier -> debug handle over the edge programs, including
    the nodes inside delegated partitions."""
    found: Dict[str, int] = {}

    def visit(gm: torch.fx.GraphModule) -> None:
        for node in gm.graph.nodes:
            handle = node.meta.get(DEBUG_HANDLE)
            key = source_identifier(node) if handle is not None else None
            if key is not None:
                found.setdefault(key, handle)
            if node.op == "get_attr":
                sub = getattr(gm, node.target, None)
                sub = getattr(sub, "original_module", sub)
                if isinstance(sub, torch.fx.GraphModule):
                    visit(sub)

    for ep in programs.values():
        visit(ep.graph_module)
    return found


def _bundled_data(bundled_program):
    """(reference outputs per method and case, inputs of forward's case 0)
    of a bundled program (upstream's BundledProgram or anything shaped like it)."""
    suites = getattr(bundled_program, "method_test_suites", None)
    if suites is None:
        raise ETRecordError(f"bundled_program: expected a BundledProgram with "
                            f"method_test_suites, got {type(bundled_program).__name__}")
    reference = {s.method_name: [list(c.expected_outputs) for c in s.test_cases]
                 for s in suites}
    inputs = None
    for s in suites:
        if s.method_name == "forward" and s.test_cases:
            inputs = list(s.test_cases[0].inputs)
    return reference, inputs


def generate_etrecord(et_record_path: Union[PathLike, io.BytesIO], edge_dialect_program,
                      executorch_program, exported_program=None,
                      extra_recorded_export_modules: Optional[Dict[str, Any]] = None,
                      bundled_program=None) -> None:
    """Writes an ETRecord for a program exported with to_edge(...) and
    to_executorch() (upstream's signature).

    edge_dialect_program: the EdgeProgramManager (ours is not changed by
      to_executorch, so no copy is needed), or its ExportedProgram(s).
    executorch_program: the ExecutorchProgramManager; gives the maps.
    exported_program: the ATen program torch.export made; debug handles are
      copied onto (a copy of) it, so the numeric comparison can use it.
    extra_recorded_export_modules: more graphs to record, by name ("name"
      means "name/forward").
    bundled_program: reference outputs and representative inputs.
    """
    edge = _programs_of(edge_dialect_program, "edge_dialect_program")
    maps = {}
    for attr in ("debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map"):
        if not hasattr(executorch_program, attr):
            raise ETRecordError(f"executorch_program: expected the ExecutorchProgramManager "
                                f"from to_executorch(), got {type(executorch_program).__name__}")
        maps[attr] = getattr(executorch_program, attr)
    record = ETRecord(edge_dialect_program=edge["forward"] if list(edge) == ["forward"] else edge,
                      _debug_handle_map=maps["debug_handle_map"],
                      _delegate_map=maps["delegate_map"],
                      _instruction_id_to_num_outs_map=maps["instruction_id_to_num_outs_map"])
    if exported_program is not None:
        aten = _programs_of(exported_program, "exported_program")
        if "forward" not in aten:
            raise ETRecordError(f"exported_program: no 'forward' method among {sorted(aten)}")
        forward = copy.deepcopy(aten["forward"])
        propagate_back(forward.graph_module, _source_handles(edge))
        record.exported_program = forward
        record.export_graph_id = id(aten["forward"].graph)
    for name, value in (extra_recorded_export_modules or {}).items():
        for method, ep in _programs_of(value, f"extra_recorded_export_modules['{name}']").items():
            key = name if "/" in name else f"{name}/{method}"
            record.graph_map[key] = ep
    if bundled_program is not None:
        reference, inputs = _bundled_data(bundled_program)
        record.update_reference_outputs(reference)
        if inputs is not None:
            record.update_representative_inputs(inputs)
    record.save(et_record_path)


# --- Reading -------------------------------------------------------------------


def _read_torch(z: zipfile.ZipFile, name: str):
    try:
        return torch.load(io.BytesIO(z.read(name)), weights_only=True)
    except Exception as e:
        raise ETRecordError(f"ETRecord entry '{name}' is not a torch.save payload that loads "
                            f"with weights_only: {e}") from e


def _read_json(z: zipfile.ZipFile, name: str):
    try:
        return json.loads(z.read(name))
    except ValueError as e:
        raise ETRecordError(f"ETRecord entry '{name}' is not JSON: {e}") from None


def _read_program(z: zipfile.ZipFile, names: set, base: str) -> ExportedProgram:
    # A missing companion (the 2023 layout has no _constants or
    # _example_inputs) reads as empty, which torch deserializes as {}.
    parts = [z.read(base)] + [z.read(base + s) if base + s in names else b"" for s in COMPANIONS]
    try:
        return _serde.deserialize_program(*parts)
    except Exception as e:
        raise ETRecordError(f"ETRecord entry '{base}' is not a program this torch "
                            f"({torch.__version__}) can deserialize: {type(e).__name__}: {e}") \
            from e


def _by_method(mapping):
    """A map keyed by method; the 2023 layout stored forward's map bare
    (keys are instruction indices), which is read as forward's."""
    if mapping is None or not isinstance(mapping, dict):
        return mapping
    if not mapping or all(k.lstrip("-").isdigit() for k in mapping):
        return {"forward": mapping}
    return mapping


def _starts_like_etrecord(source) -> bool:
    """Whether the file's first ZIP entry (local header at byte 0, name at
    byte 30) is ETRECORD_V0, as every ETRecord's is."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            head = f.read(30 + len(MAGIC))
    else:
        position = source.tell()
        source.seek(0)
        head = source.read(30 + len(MAGIC))
        source.seek(position)
    return head[:4] == b"PK\x03\x04" and head[30:] == MAGIC.encode()


def parse_etrecord(etrecord_path: Union[PathLike, io.BytesIO]) -> ETRecord:
    """Reads an ETRecord (spec 3.4), the current layout or the 2023 one.
    Raises ETRecordError naming the file and the reason when it is not one."""
    where = etrecord_path if isinstance(etrecord_path, (str, os.PathLike)) else "the buffer"
    try:
        z = zipfile.ZipFile(etrecord_path)
    except zipfile.BadZipFile:
        raise ETRecordError(f"{where} is not an ETRecord: not a ZIP archive") from None
    with z:
        names = set(z.namelist())
        if MAGIC not in names:
            if _starts_like_etrecord(etrecord_path):
                raise ETRecordError(f"{where} is a truncated or damaged ETRecord: it starts with "
                                    f"the {MAGIC} entry but its ZIP directory is missing or "
                                    f"belongs to an embedded archive")
            raise ETRecordError(f"{where} is not an ETRecord: the ZIP has no {MAGIC} entry "
                                f"(entries: {', '.join(sorted(names)[:8])})")
        record = ETRecord()
        edge: Dict[str, ExportedProgram] = {}
        for name in sorted(names):
            if name == MAGIC or name.endswith(COMPANIONS):
                continue
            try:
                _read_entry(z, names, name, record, edge)
            except (zipfile.BadZipFile, EOFError, OSError) as e:  # A CRC mismatch, a cut file.
                raise ETRecordError(f"{where}: ETRecord entry '{name}' (or a companion) cannot "
                                    f"be read: {e}") from None
        if not edge:
            raise ETRecordError(f"{where}: the ETRecord has no edge dialect program")
        record.edge_dialect_program = edge["forward"] if list(edge) == ["forward"] else edge
        return record


def _read_entry(z: zipfile.ZipFile, names: set, name: str, record: ETRecord,
                edge: Dict[str, ExportedProgram]) -> None:
    """Stores entry `name` (classified as in spec 3.4) into `record`/`edge`."""
    if name == DEBUG_HANDLE_MAP:
        record._debug_handle_map = _by_method(_read_json(z, name))
    elif name == DELEGATE_MAP:
        record._delegate_map = _by_method(_read_json(z, name))
    elif name == NUM_OUTS_MAP:
        record._instruction_id_to_num_outs_map = _by_method(_read_json(z, name))
    elif name == EXPORT_GRAPH_ID:
        record.export_graph_id = _read_json(z, name)
    elif name == REFERENCE_OUTPUTS:
        record._reference_outputs = _read_torch(z, name)
    elif name == REPRESENTATIVE_INPUTS:
        record._representative_inputs = _read_torch(z, name)
    elif name == EXPORTED_PROGRAM:
        record.exported_program = _read_program(z, names, name)
    elif name == EDGE_PROGRAM:  # The 2023 layout: one program, no method.
        edge["forward"] = _read_program(z, names, name)
    elif name.startswith(EDGE_PROGRAM + "/"):
        edge[name[len(EDGE_PROGRAM) + 1:]] = _read_program(z, names, name)
    else:
        record.graph_map[name] = _read_program(z, names, name)
