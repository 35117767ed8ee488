"""executorch.exir.dialects._ops: `ops.edge.<namespace>.<op>.<overload>`.

Upstream's edge dialect wraps each ATen operator in an EdgeOpOverload;
torchlight's edge programs call the ATen operators themselves. So
`ops.edge.aten.add.Tensor` *is* torch.ops.aten.add.Tensor, and a partitioner
comparing `node.target == exir_ops.edge.aten.add.Tensor` matches our nodes.
`ops.backend` does the same for backend dialect operators."""

import torch


class _Dialect:
    """Operator namespaces of one dialect, resolved in torch.ops."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, namespace: str):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return getattr(torch.ops, namespace)

    def __repr__(self) -> str:
        return f"exir_ops.{self._name} (torch.ops)"


class _Ops:
    edge = _Dialect("edge")
    backend = _Dialect("backend")


ops = _Ops()

__all__ = ["ops"]
