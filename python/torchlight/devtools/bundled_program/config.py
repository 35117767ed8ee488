"""The test cases a bundled program carries (upstream's
executorch.devtools.bundled_program.config)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Union

import torch
from torch.utils._pytree import tree_flatten

# What one input or expected output may be (the members of the file's Value union).
ConfigValue = Union[torch.Tensor, int, bool, float]
MethodInputType = Sequence[ConfigValue]
MethodOutputType = Sequence[torch.Tensor]

_CONFIG_TYPES = (torch.Tensor, int, bool, float)


class BundledProgramError(AssertionError, ValueError):
    """A test case or suite that cannot be bundled with its program.

    Upstream's writer reports these with `assert`, so callers may catch
    AssertionError; ValueError is what the error is.
    """


def _flatten(data, what: str) -> List[ConfigValue]:
    """Leaves of a (possibly nested) list/tuple/dict, each a supported type."""
    leaves, _ = tree_flatten(data)
    for index, leaf in enumerate(leaves):
        if leaf is None or not isinstance(leaf, _CONFIG_TYPES):
            raise BundledProgramError(
                f"{what} {index} has type {type(leaf).__name__}; a bundled value must be a "
                f"torch.Tensor, int, bool or float")
    return leaves


class MethodTestCase:
    """One execution: its inputs and, optionally, the outputs to expect.

    Nested lists, tuples and dicts are flattened in pytree order, as the
    method's inputs are.
    """

    def __init__(self, inputs: MethodInputType,
                 expected_outputs: Optional[MethodOutputType] = None) -> None:
        self.inputs: List[ConfigValue] = _flatten(inputs, "input")
        self.expected_outputs: List[ConfigValue] = (
            [] if expected_outputs is None else _flatten(expected_outputs, "expected output"))

    def __repr__(self) -> str:
        return (f"MethodTestCase({len(self.inputs)} inputs, "
                f"{len(self.expected_outputs)} expected outputs)")


@dataclass
class MethodTestSuite:
    """The test cases of one method, by name."""

    method_name: str
    test_cases: Sequence[MethodTestCase]
