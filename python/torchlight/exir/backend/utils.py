"""executorch.exir.backend.utils: tag_constant_data."""

from torch.export import ExportedProgram

from torchlight.delegation import DELEGATION_TAG, _constant_inputs


def tag_constant_data(edge_program: ExportedProgram) -> None:
    """Tags each parameter, never-written buffer and lifted constant whose
    users all carry one delegation tag with that tag, so the partition gets
    it as its own constant instead of a delegate input. A constant read
    outside the partition (or by two) stays untagged and is passed in."""
    constants = _constant_inputs(edge_program)
    for node in edge_program.graph_module.graph.nodes:
        if node.op != "placeholder" or node.name not in constants or not node.users:
            continue
        tags = {user.meta.get(DELEGATION_TAG) for user in node.users}
        if len(tags) == 1 and None not in tags:
            node.meta[DELEGATION_TAG] = tags.pop()


__all__ = ["tag_constant_data"]
