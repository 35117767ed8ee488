"""Export errors that say which graph node failed and where the user wrote it."""

from __future__ import annotations

import os
import re
from typing import Iterable, Optional, Tuple

import torch
import torch.fx

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n(?P<code>[^\n]*)')


class ExportError(Exception):
    """A model construct torchlight cannot export.

    The message names each offending node, its operator and, when torch.export
    recorded it, the user's source line.
    """


def user_frame(node: torch.fx.Node) -> Optional[Tuple[str, int, str, str]]:
    """(file, line, function, code) of the user's line that made `node`, if recorded."""
    trace = node.meta.get("stack_trace") or ""
    frames = list(_FRAME.finditer(trace))
    if not frames:
        return None
    # The innermost frame outside torch itself (torch.cond, custom op
    # wrappers, ... add frames of their own below the user's line).
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    user = [f for f in frames if not f["file"].startswith(torch_dir)] or frames
    last = user[-1]
    return last["file"], int(last["line"]), last["func"], last["code"].strip()


def target_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    name = getattr(target, "name", None)
    if callable(name):  # OpOverload.name() -> "aten::add.Tensor"
        return name()
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or str(target)


def describe(node: torch.fx.Node) -> str:
    """"node 'mul' (aten::mul.Tensor) at model.py:12 in forward: `x * 3`"."""
    where = user_frame(node)
    text = f"node '{node.name}' ({target_name(node)})"
    if where is None:
        return text + " (no source location recorded)"
    file, line, func, code = where
    return text + f" at {file}:{line} in {func}: `{code}`"


def node_error(node: torch.fx.Node, message: str) -> ExportError:
    """An ExportError for one node: "<describe(node)>: <message>"."""
    return ExportError(f"{describe(node)}: {message}")


def raise_all(problems: Iterable[Tuple[torch.fx.Node, str]], headline: str) -> None:
    """Raises one ExportError listing every (node, message) pair, if there are any."""
    problems = list(problems)
    if not problems:
        return
    lines = [f"{headline} ({len(problems)} problem{'s' if len(problems) != 1 else ''}):"]
    lines += [f"  - {describe(node)}: {message}" for node, message in problems]
    raise ExportError("\n".join(lines))
