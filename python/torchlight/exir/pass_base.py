"""executorch.exir.pass_base: PassBase and PassResult (torch's, which
upstream's derive from). Upstream's ExportPass (a retracing interpreter) is
not provided; write passes as PassBase.call(graph_module)."""

from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["PassBase", "PassResult"]
