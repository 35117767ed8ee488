"""executorch.exir.backend.backend_api: to_backend, in upstream's two forms.

    to_backend(edge_program, partitioner) -> ExportedProgram
        partitions tagged by `partitioner` become delegate calls.
    to_backend(backend_id, edge_program, compile_specs) -> LoweredBackendModule
        the whole program preprocessed by one backend. The result runs
        eagerly (the original graph); embedding it in a module that is
        exported again, as upstream allows, is not supported.
"""

from typing import List, Union

from torch.export import ExportedProgram

from torchlight.delegation import (CompileSpec, LoweredBackendModule, Partitioner,
                                   backend_details, to_backend_program)
from torchlight.errors import ExportError


def to_backend(first: Union[str, ExportedProgram], second, compile_specs: List[CompileSpec] = None):
    if isinstance(first, ExportedProgram):
        if not isinstance(second, Partitioner):
            raise TypeError(f"to_backend(edge_program, partitioner): the second argument must be "
                            f"a Partitioner, got {type(second).__name__}")
        return to_backend_program(first, second)
    if not isinstance(first, str) or not isinstance(second, ExportedProgram):
        raise TypeError("to_backend takes (edge_program, partitioner) or "
                        "(backend_id, edge_program, compile_specs)")
    details = backend_details(first)
    specs = list(compile_specs or [])
    if details.preprocess_takes_exported_program:
        result = details.preprocess(second, specs)
    elif details.owns_constants:
        raise ExportError(f"backend '{first}' takes partitions with its constants as attributes; "
                          f"lower it with a partitioner instead of to_backend(backend_id, ...)")
    else:
        result = details.preprocess(second.graph_module, specs)
    lowered = LoweredBackendModule(first, result.processed_bytes, specs, second.module())
    lowered.debug_handle_map = result.debug_handle_map
    return lowered


__all__ = ["to_backend"]
