"""ExportedProgram <-> the four ETRecord entries of one program (spec 3.2):
torch.export's JSON for the graph plus torch.save bytes of its state dict,
constants and example inputs.

Two things torch.export's serializer does not do on its own, done here:
- node meta "debug_handle" is kept (as a string, as upstream writes it, and
  read back as an int), since the Inspector joins on it;
- a delegate call (torchlight's call_delegate on a LoweredBackendModule)
  cannot be serialized, so a delegated program is recorded with each
  partition's original nodes inlined in its place (their debug handles
  intact). Which instructions were delegated is in the JSON maps, not in
  the recorded graph.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from typing import Dict, List, Tuple

import torch
import torch.fx
from torch._export.serde import serialize as torch_serde
from torch.export import ExportedProgram
from torch.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec,
                                          TensorArgument)

from torchlight import ops
from torchlight.passes.debug_handles import DEBUG_HANDLE

_PATCH_LOCK = threading.Lock()


@contextlib.contextmanager
def _debug_handles_in_metadata():
    """While active, torch.export's (de)serializer carries meta["debug_handle"]."""
    serializer = torch_serde.GraphModuleSerializer
    deserializer = torch_serde.GraphModuleDeserializer
    plain_out, plain_in = serializer.serialize_metadata, deserializer.deserialize_metadata

    def serialize_metadata(self, node):
        meta = plain_out(self, node)
        if node.meta.get(DEBUG_HANDLE) is not None:
            meta[DEBUG_HANDLE] = str(node.meta[DEBUG_HANDLE])
        return meta

    def deserialize_metadata(self, metadata):
        meta = plain_in(self, metadata)
        if metadata.get(DEBUG_HANDLE):
            meta[DEBUG_HANDLE] = int(metadata[DEBUG_HANDLE])
        return meta

    with _PATCH_LOCK:
        serializer.serialize_metadata = serialize_metadata
        deserializer.deserialize_metadata = deserialize_metadata
        try:
            yield
        finally:
            serializer.serialize_metadata = plain_out
            deserializer.deserialize_metadata = plain_in


def has_delegates(ep: ExportedProgram) -> bool:
    return any(n.op == "call_function" and ops.is_delegate_call(n.target)
               for n in ep.graph.nodes)


def inline_delegates(ep: ExportedProgram) -> ExportedProgram:
    """A copy of `ep` with every delegate call replaced by the nodes of its
    partition. Constants a backend took into its partition (get_attr nodes
    of the partition graph) become lifted-constant inputs."""
    gm = ep.graph_module
    calls = [n for n in ep.graph.nodes if n.op == "call_function" and ops.is_delegate_call(n.target)]
    graph = torch.fx.Graph()
    env: Dict[torch.fx.Node, object] = {}
    input_specs: List[InputSpec] = []
    constants = dict(ep.constants)
    owned: Dict[Tuple[str, str], torch.fx.Node] = {}
    # Lifted constants must come first, before the program's own inputs.
    for call in calls:
        lowered_name = call.args[0].target
        partition = getattr(gm, lowered_name).original_module
        for node in partition.graph.nodes:
            if node.op != "get_attr":
                continue
            name = f"{lowered_name}.{node.target}".replace(".", "_")
            placeholder = graph.placeholder(name)
            placeholder.meta = dict(node.meta)
            owned[(lowered_name, node.target)] = placeholder
            constants[name] = getattr(partition, node.target).detach()  # A constant, not a Parameter.
            input_specs.append(InputSpec(InputKind.CONSTANT_TENSOR,
                                         TensorArgument(name=placeholder.name), name))
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            env[node] = graph.node_copy(node)
        elif node.op == "get_attr" and isinstance(getattr(gm, node.target, None),
                                                  torch.nn.Module) \
                and hasattr(getattr(gm, node.target), "original_module"):
            continue  # A lowered module: its nodes are inlined at the call.
        elif node in calls:
            lowered_name = node.args[0].target
            partition = getattr(gm, lowered_name).original_module
            inner: Dict[torch.fx.Node, object] = {}
            inputs = iter(node.args[1:])
            for sub in partition.graph.nodes:
                if sub.op == "placeholder":
                    inner[sub] = env[next(inputs)]
                elif sub.op == "get_attr":
                    inner[sub] = owned[(lowered_name, sub.target)]
                elif sub.op == "output":
                    env[node] = tuple(inner[r] for r in sub.args[0])
                else:
                    inner[sub] = graph.node_copy(sub, lambda n: inner[n])
        elif node.op == "call_function" and node.target is operator.getitem \
                and node.args[0] in calls:
            env[node] = env[node.args[0]][node.args[1]]
        else:
            env[node] = graph.node_copy(node, lambda n: env[n])
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    input_specs += [InputSpec(s.kind, TensorArgument(name=env[p].name)
                              if isinstance(s.arg, TensorArgument) else s.arg, s.target,
                              s.persistent)
                    for s, p in zip(ep.graph_signature.input_specs, placeholders)]
    module = torch.fx.GraphModule(gm, graph)
    signature = ExportGraphSignature(input_specs, list(ep.graph_signature.output_specs))
    return ExportedProgram(root=module, graph=module.graph, graph_signature=signature,
                           state_dict=dict(ep.state_dict),
                           range_constraints=dict(ep.range_constraints),
                           module_call_graph=list(ep.module_call_graph), constants=constants)


def serialize_program(ep: ExportedProgram) -> Tuple[bytes, bytes, bytes, bytes]:
    """(graph JSON, state dict, constants, example inputs) bytes of `ep`."""
    if has_delegates(ep):
        ep = inline_delegates(ep)
    with _debug_handles_in_metadata():
        artifact = torch_serde.serialize(ep)
    return (artifact.exported_program, artifact.state_dict, artifact.constants,
            artifact.example_inputs)


def deserialize_program(graph: bytes, state_dict: bytes, constants: bytes,
                        example_inputs: bytes) -> ExportedProgram:
    artifact = torch_serde.SerializedArtifact(graph, state_dict, constants, example_inputs)
    with _debug_handles_in_metadata():
        return torch_serde.deserialize(artifact)
