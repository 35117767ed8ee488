"""Delegation: hand parts of a program to a backend (ExecuTorch's to_backend).

A Partitioner tags the nodes a backend can run (node.meta["delegation_tag"])
and says, per tag, which backend and compile specs to use. to_backend then
cuts each tagged group out into its own graph, asks the backend's
BackendDetails.preprocess for a blob, and puts a single delegate call in
its place. The .pte stores the blob, and the runtime hands it to the backend
registered under the same id.

Backends written for upstream ExecuTorch (torchlight.exir.backend) work too:
their preprocess takes the partition as an ExportedProgram, they are found
by class name when no backend is registered under the id, and constants a
partitioner tags (tag_constant_data) are handed to them as the partition's
parameters.
"""

from __future__ import annotations

import abc
import copy
import heapq
import operator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Dict, List, Mapping, Optional, Tuple, Type

import torch
import torch.fx
from torch.export import ExportedProgram
from torch.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind,
                                          OutputSpec, SymIntArgument, TensorArgument)

from torchlight import ops
from torchlight.errors import ExportError, node_error
from torchlight.passes.debug_handles import handles_in

DELEGATION_TAG = "delegation_tag"


@dataclass(frozen=True)
class CompileSpec:
    """One backend option, passed to preprocess and stored in the program."""

    key: str
    value: bytes


@dataclass
class DelegationSpec:
    backend_id: str
    compile_specs: List[CompileSpec] = field(default_factory=list)


@dataclass
class PartitionResult:
    tagged_exported_program: ExportedProgram
    partition_tags: Dict[str, DelegationSpec]


class Partitioner(abc.ABC):
    """Decides which nodes go to which backend."""

    def __init__(self, spec: Mapping[str, object] = MappingProxyType({})):
        self._spec = spec

    @property
    def spec(self) -> Mapping[str, object]:
        return getattr(self, "_spec", MappingProxyType({}))

    def ops_to_not_decompose(self, ep: ExportedProgram) \
            -> Tuple[List[torch._ops.OpOverload], Optional[object]]:
        """Operators to_edge_transform_and_lower keeps whole for this
        partitioner, and upstream's node filter (unused here)."""
        return [], None

    @abc.abstractmethod
    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        """Tags call_function nodes of `exported_program` (which it may edit)
        with node.meta["delegation_tag"] and returns the tags' specs."""


@dataclass
class PreprocessResult:
    processed_bytes: bytes = bytes()
    # Delegate debug id (what the backend logs in ETDump) -> debug handles of
    # the partition's nodes; recorded in ETRecord's delegate_map.
    debug_handle_map: Optional[Dict] = None


class BackendDetails(abc.ABC):
    """The ahead-of-time half of a backend."""

    # When True, the partition's graph reads the parameters, buffers and
    # lifted constants it uses as get_attr nodes of its own (the tensors are
    # attributes of the graph module) instead of as delegate inputs, so the
    # backend can pack them into its blob (as XNNPACK's payload does).
    owns_constants: bool = False
    # When True, preprocess takes the partition as an ExportedProgram
    # (upstream's signature, torchlight.exir.backend.backend_details), with
    # the constants tagged for the partition as its parameters/constants.
    preprocess_takes_exported_program: bool = False

    @staticmethod
    @abc.abstractmethod
    def preprocess(graph_module: torch.fx.GraphModule,
                   compile_specs: List[CompileSpec]) -> PreprocessResult:
        """Compiles one partition into the blob the runtime backend loads.

        `graph_module` takes the partition's inputs as placeholders (each
        with meta["val"]) and returns a tuple of its outputs."""


_BACKENDS: Dict[str, Type[BackendDetails]] = {}


def register_backend(backend_id: str, details: Type[BackendDetails]) -> None:
    """Makes `details` the preprocessor for programs delegating to `backend_id`."""
    _BACKENDS[backend_id] = details


def _subclasses(cls: type) -> List[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found += _subclasses(sub)
    return found


def backend_details(backend_id: str) -> Type[BackendDetails]:
    """The backend registered under `backend_id`, else (as upstream finds
    backends) the BackendDetails subclass of that class name, the latest
    defined if several are."""
    if backend_id in _BACKENDS:
        return _BACKENDS[backend_id]
    named = [c for c in _subclasses(BackendDetails)
             if c.__name__ == backend_id and not getattr(c, "__abstractmethods__", None)]
    if named:
        return named[-1]
    known = ", ".join(sorted(_BACKENDS)) or "none"
    raise ExportError(f"no backend is registered under '{backend_id}' (registered: {known}) and "
                      f"no BackendDetails subclass has that class name; call "
                      f"torchlight.register_backend or define the class first")


def partition_program(sub_module: torch.fx.GraphModule,
                      constants: Dict[str, tuple]) -> ExportedProgram:
    """The partition as an ExportedProgram, as upstream's preprocess gets
    it: each constant the partition owns (a get_attr of `sub_module`) becomes
    a parameter, buffer or constant placeholder, followed by the partition's
    inputs as user inputs; its results are user outputs."""
    graph = torch.fx.Graph()
    env: Dict[torch.fx.Node, torch.fx.Node] = {}
    input_specs, state_dict, lifted = [], {}, {}
    nodes = list(sub_module.graph.nodes)
    for node in [n for n in nodes if n.op == "get_attr"]:
        spec, value = constants[node.target]
        placeholder = graph.placeholder(node.target)
        placeholder.meta = dict(node.meta)
        env[node] = placeholder
        kind = spec.kind if spec.kind != InputKind.BUFFER or spec.persistent is not False \
            else InputKind.CONSTANT_TENSOR
        input_specs.append(InputSpec(kind, TensorArgument(name=placeholder.name), node.target,
                                     persistent=True if kind == InputKind.BUFFER else None))
        (lifted if kind == InputKind.CONSTANT_TENSOR else state_dict)[node.target] = value
    for node in [n for n in nodes if n.op == "placeholder"]:
        placeholder = graph.placeholder(node.name)
        placeholder.meta = dict(node.meta)
        env[node] = placeholder
        input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(name=placeholder.name),
                                     None))
    output_specs = []
    for node in nodes:
        if node.op in ("get_attr", "placeholder"):
            continue
        if node.op == "output":
            results = [env[n] for n in node.args[0]]
            graph.output(tuple(results))
            for r in results:
                arg = (TensorArgument(name=r.name) if isinstance(r.meta.get("val"), torch.Tensor)
                       else SymIntArgument(name=r.name))
                output_specs.append(OutputSpec(OutputKind.USER_OUTPUT, arg, None))
            continue
        env[node] = graph.node_copy(node, lambda n: env[n])
    module = torch.fx.GraphModule(sub_module, graph)
    return ExportedProgram(root=module, graph=module.graph,
                           graph_signature=ExportGraphSignature(input_specs, output_specs),
                           state_dict=state_dict, range_constraints={}, module_call_graph=[],
                           constants=lifted)


class LoweredBackendModule(torch.nn.Module):
    """A partition after preprocess. Running it eagerly runs the original
    partition graph, so a delegated program still works in Python."""

    def __init__(self, backend_id: str, processed_bytes: bytes,
                 compile_specs: List[CompileSpec], original_module: torch.fx.GraphModule):
        super().__init__()
        self.backend_id = backend_id
        self.processed_bytes = bytes(processed_bytes)
        self.compile_specs = list(compile_specs)
        self.original_module = original_module
        # Read now: later passes may drop original_module's graph.
        self.partition_debug_handles = handles_in(original_module)
        self.debug_handle_map: Optional[Dict] = None  # The backend's, if it gives one.

    def forward(self, *args):
        return self.original_module(*args)


@ops.mark_delegate_call
def call_delegate(lowered: LoweredBackendModule, *args, out=None):
    """Graph marker for a delegate call: results are a tuple, read with getitem."""
    return lowered(*args)


def _stable_topological_sort(graph: torch.fx.Graph) -> None:
    """Reorders nodes so every node follows its inputs, otherwise keeping order."""
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    pending = {n: len(set(n.all_input_nodes)) for n in nodes}
    ready = [(index[n], n.name) for n in nodes if pending[n] == 0]
    heapq.heapify(ready)
    by_name = {n.name: n for n in nodes}
    order = []
    while ready:
        _, name = heapq.heappop(ready)
        node = by_name[name]
        order.append(node)
        for user in node.users:
            pending[user] -= 1
            if pending[user] == 0:
                heapq.heappush(ready, (index[user], user.name))
    assert len(order) == len(nodes), "cycle in graph"
    output = nodes[-1]
    for node in order:
        if node is not output:
            output.prepend(node)


def _check_convex(nodes: List[torch.fx.Node], tag: str) -> None:
    """A partition must not feed a node outside it that feeds back into it
    (one delegate call could then not run both before and after it)."""
    inside = set(nodes)
    frontier = [u for n in nodes for u in n.users if u not in inside]
    seen = set()
    while frontier:
        node = frontier.pop()
        if node in seen:
            continue
        seen.add(node)
        for user in node.users:
            if user in inside:
                raise node_error(user, f"partition '{tag}' is not convex: it depends on "
                                       f"'{node.name}', which depends on the partition")
            frontier.append(user)


def _constant_inputs(ep: ExportedProgram) -> Dict[str, tuple]:
    """Placeholder name -> (input spec, tensor) for every parameter, buffer
    never written, and lifted constant of `ep`."""
    signature = ep.graph_signature
    mutated = {s.target for s in signature.output_specs if s.kind == OutputKind.BUFFER_MUTATION}
    found = {}
    for spec in signature.input_specs:
        if spec.kind == InputKind.PARAMETER:
            found[spec.arg.name] = (spec, ep.state_dict[spec.target])
        elif spec.kind == InputKind.BUFFER and spec.target not in mutated:
            value = (ep.state_dict[spec.target] if spec.persistent is not False
                     and spec.target in ep.state_dict else ep.constants[spec.target])
            found[spec.arg.name] = (spec, value)
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            found[spec.arg.name] = (spec, ep.constants[spec.target])
    return found


def _sync_placeholder_names(ep: ExportedProgram) -> None:
    """deepcopy renames placeholders that shadow Python builtins ("input"
    becomes "input_1"); point the signature at the names the graph has."""
    placeholders = [n for n in ep.graph_module.graph.nodes if n.op == "placeholder"]
    for node, spec in zip(placeholders, ep.graph_signature.input_specs):
        if isinstance(spec.arg, TensorArgument) and spec.arg.name != node.name:
            spec.arg = TensorArgument(name=node.name)


def _drop_unused_constants(ep: ExportedProgram, constants: Dict[str, tuple]) -> None:
    """Removes constant placeholders nothing reads any more (their partition
    took a copy), with their signature entries and stored tensors."""
    graph = ep.graph_module.graph
    for node in list(graph.nodes):
        if node.op != "placeholder" or node.users or node.name not in constants:
            continue
        spec, _ = constants[node.name]
        ep.graph_signature.input_specs.remove(spec)
        still_used = any(s.target == spec.target for s in ep.graph_signature.input_specs)
        if not still_used:
            ep.state_dict.pop(spec.target, None)
            ep.constants.pop(spec.target, None)
        graph.erase_node(node)


def _lower_partition(gm: torch.fx.GraphModule, nodes: List[torch.fx.Node], tag: str,
                     spec: DelegationSpec, number: int,
                     constants: Dict[str, tuple] = None) -> None:
    inside = set(nodes)
    # A tagged multi-output node brings its getitem readers along.
    for node in list(nodes):
        for user in node.users:
            if user.target is operator.getitem and user not in inside:
                inside.add(user)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    nodes = sorted(inside, key=order.__getitem__)
    _check_convex(nodes, tag)

    details = backend_details(spec.backend_id)
    takes_program = details.preprocess_takes_exported_program
    if takes_program:
        # Upstream's contract: the constants the partitioner tagged.
        tagged = {n.name for n in gm.graph.nodes
                  if n.op == "placeholder" and n.meta.get(DELEGATION_TAG) == tag}
        constants = {name: c for name, c in (constants or {}).items() if name in tagged}
    elif not details.owns_constants:
        constants = {}
    inputs: List[torch.fx.Node] = []
    owned: List[torch.fx.Node] = []
    for node in nodes:
        for used in node.all_input_nodes:
            if used in inside or used in inputs or used in owned:
                continue
            (owned if used.op == "placeholder" and used.name in constants else inputs).append(used)
    outputs = [n for n in nodes if any(u not in inside for u in n.users)]
    if not outputs:
        return

    sub = torch.fx.Graph()
    env: Dict[torch.fx.Node, torch.fx.Node] = {}
    for node in inputs:
        placeholder = sub.placeholder(node.name)
        placeholder.meta = dict(node.meta)
        env[node] = placeholder
    for node in owned:
        attr = sub.get_attr(node.name)
        attr.meta = dict(node.meta)
        env[node] = attr
    for node in nodes:
        env[node] = sub.node_copy(node, lambda n: env[n])
    sub.output(tuple(env[n] for n in outputs))
    if owned:
        sub_module = torch.fx.GraphModule({n.name: constants[n.name][1] for n in owned}, sub)
    else:
        sub_module = torch.fx.GraphModule(gm, sub)

    if takes_program:
        result = details.preprocess(partition_program(sub_module, constants),
                                    list(spec.compile_specs))
    else:
        result = details.preprocess(sub_module, list(spec.compile_specs))
    if not isinstance(result, PreprocessResult):
        raise ExportError(f"backend '{spec.backend_id}': preprocess must return a "
                          f"PreprocessResult, got {type(result).__name__}")
    lowered = LoweredBackendModule(spec.backend_id, result.processed_bytes, spec.compile_specs,
                                   sub_module)
    lowered.debug_handle_map = result.debug_handle_map
    name = f"lowered_module_{number}"
    gm.add_submodule(name, lowered)

    graph = gm.graph
    with graph.inserting_before(nodes[-1].next):
        module_node = graph.get_attr(name)
        call = graph.call_function(call_delegate, (module_node, *inputs))
        call.meta["val"] = tuple(n.meta["val"] for n in outputs)
        call.meta["stack_trace"] = nodes[0].meta.get("stack_trace")
        call.meta[DELEGATION_TAG] = tag
        for i, node in enumerate(outputs):
            item = graph.call_function(operator.getitem, (call, i))
            item.meta["val"] = node.meta["val"]
            node.replace_all_uses_with(item, delete_user_cb=lambda user: user not in inside)
    for node in reversed(nodes):
        graph.erase_node(node)
    _stable_topological_sort(graph)


def to_backend_program(ep: ExportedProgram, partitioner: Partitioner) -> ExportedProgram:
    """A copy of `ep` in which each partition `partitioner` tags is replaced
    by one call_delegate node (inputs: the values the partition reads;
    results: a tuple of the values others read from it).

    Raises ExportError for an unknown backend id or a non-convex partition.
    """
    ep = copy.deepcopy(ep)
    _sync_placeholder_names(ep)
    result = partitioner.partition(ep)
    ep = result.tagged_exported_program
    gm = ep.graph_module
    constants = _constant_inputs(ep)
    number = sum(1 for n in gm.graph.nodes if n.op == "get_attr" and
                 n.target.startswith("lowered_module_"))
    for tag, spec in result.partition_tags.items():
        nodes = [n for n in gm.graph.nodes
                 if n.op == "call_function" and n.meta.get(DELEGATION_TAG) == tag]
        if nodes:
            _lower_partition(gm, nodes, tag, spec, number, constants)
            number += 1
    _drop_unused_constants(ep, constants)
    gm.graph.lint()
    gm.recompile()
    return ep
