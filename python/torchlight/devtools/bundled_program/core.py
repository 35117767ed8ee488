"""BundledProgram: an emitted program plus its test suites, checked against
each other (upstream's executorch.devtools.bundled_program.core)."""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch

from torchlight import ops
from torchlight.devtools.bundled_program import schema as bp_schema
from torchlight.devtools.bundled_program.config import (BundledProgramError, ConfigValue,
                                                        MethodTestSuite)
from torchlight.pte import schema as pte_schema

# The Python type a test value must have for each kind of program input.
_INPUT_TYPES = {pte_schema.Tensor: torch.Tensor, pte_schema.Int: int,
                pte_schema.Double: float, pte_schema.Bool: bool}


def _layout(t: torch.Tensor):
    """(dim_order, tensor whose row-major bytes are in that order)."""
    t = t.detach().cpu()
    if t.dim() == 4 and not t.is_contiguous() and t.is_contiguous(
            memory_format=torch.channels_last):
        return [0, 2, 3, 1], t.permute(0, 2, 3, 1).contiguous()
    return list(range(t.dim())), t.contiguous()


def tensor_value(t: torch.Tensor) -> bp_schema.Tensor:
    """A tensor as the file stores it: dtype, sizes, dim order and raw bytes."""
    dim_order, dense = _layout(t)
    data = b"" if dense.numel() == 0 else dense.reshape(-1).view(torch.uint8).numpy().tobytes()
    return bp_schema.Tensor(scalar_type=ops.scalar_type(t.dtype), sizes=list(t.shape),
                            data=data, dim_order=dim_order)


def _value(v: ConfigValue) -> bp_schema.Value:
    # bool before int: bool is a subclass of int.
    if isinstance(v, torch.Tensor):
        return bp_schema.Value(tensor_value(v))
    if isinstance(v, bool):
        return bp_schema.Value(bp_schema.Bool(v))
    if isinstance(v, int):
        return bp_schema.Value(bp_schema.Int(v))
    return bp_schema.Value(bp_schema.Double(float(v)))


def _type_name(v) -> str:
    return f"a tensor of {v.dtype}" if isinstance(v, torch.Tensor) else type(v).__name__


class BundledProgram:
    """An emitted program bundled with test cases for some of its methods.

    `executorch_program` is an ExecutorchProgramManager (anything with the
    .pte bytes as `buffer` and the program tables as `executorch_program`).
    The suites are sorted by method name. Raises BundledProgramError naming
    the method and case when a case does not fit its method.
    """

    def __init__(self, executorch_program, method_test_suites: Sequence[MethodTestSuite]):
        self.executorch_program = executorch_program
        self.method_test_suites: List[MethodTestSuite] = sorted(
            method_test_suites, key=lambda s: s.method_name)
        self._check(executorch_program.executorch_program)
        self._in_schema: Optional[bp_schema.BundledProgram] = None

    def _check(self, program: pte_schema.Program) -> None:
        plans = {plan.name: plan for plan in program.execution_plan}
        seen = set()
        for suite in self.method_test_suites:
            name = suite.method_name
            if name in seen:
                raise BundledProgramError(f"method '{name}' has more than one test suite")
            seen.add(name)
            plan = plans.get(name)
            if plan is None:
                raise BundledProgramError(
                    f"a test suite names method '{name}', which the program does not have "
                    f"(methods: {', '.join(plans) or 'none'})")
            inputs = [plan.values[i].val for i in plan.inputs]
            outputs = [plan.values[i].val for i in plan.outputs]
            for k, value in enumerate(inputs):
                if type(value) not in _INPUT_TYPES:
                    raise BundledProgramError(
                        f"method '{name}' input {k} is a {type(value).__name__}; bundled inputs "
                        f"can only feed Tensor, Int, Double and Bool inputs")
            for k, value in enumerate(outputs):
                if not isinstance(value, pte_schema.Tensor):
                    raise BundledProgramError(
                        f"method '{name}' output {k} is a {type(value).__name__}; bundled "
                        f"programs only check tensor outputs")
            for c, case in enumerate(suite.test_cases):
                where = f"method '{name}' test case {c}"
                self._check_inputs(where, inputs, case.inputs)
                self._check_outputs(where, outputs, case.expected_outputs)

    @staticmethod
    def _check_inputs(where: str, expected: list, given: list) -> None:
        if len(given) != len(expected):
            raise BundledProgramError(
                f"{where} has {len(given)} inputs, but the method takes {len(expected)}")
        for k, (spec, value) in enumerate(zip(expected, given)):
            want = _INPUT_TYPES[type(spec)]
            # type(), not isinstance: True must not pass for an int input.
            if not (type(value) is want or (want is torch.Tensor
                                            and isinstance(value, torch.Tensor))):
                raise BundledProgramError(f"{where} input {k} is {_type_name(value)}, but the "
                                          f"method's input {k} is {want.__name__}")
            if want is torch.Tensor:
                dtype = ops.torch_dtype(spec.scalar_type)
                if value.dtype != dtype:
                    raise BundledProgramError(f"{where} input {k} is a tensor of {value.dtype}, "
                                              f"but the method's input {k} is {dtype}")

    @staticmethod
    def _check_outputs(where: str, expected: list, given: list) -> None:
        if given and len(given) != len(expected):
            raise BundledProgramError(f"{where} has {len(given)} expected outputs, but the "
                                      f"method returns {len(expected)}")
        for k, (spec, value) in enumerate(zip(expected, given)):
            if not isinstance(value, torch.Tensor):
                raise BundledProgramError(f"{where} expected output {k} is {_type_name(value)}; "
                                          f"expected outputs must be tensors")
            dtype = ops.torch_dtype(spec.scalar_type)
            if value.dtype != dtype:
                raise BundledProgramError(f"{where} expected output {k} is a tensor of "
                                          f"{value.dtype}, but the method's output {k} is "
                                          f"{dtype}")

    def serialize_to_schema(self) -> bp_schema.BundledProgram:
        """The file's tables for this bundle (computed once)."""
        if self._in_schema is None:
            suites = [bp_schema.BundledMethodTestSuite(
                suite.method_name,
                [bp_schema.BundledMethodTestCase([_value(v) for v in case.inputs],
                                                 [_value(v) for v in case.expected_outputs])
                 for case in suite.test_cases])
                for suite in self.method_test_suites]
            # The .pte goes in verbatim, so its segments and offsets are as exported.
            self._in_schema = bp_schema.BundledProgram(
                bp_schema.SCHEMA_VERSION, suites, bytes(self.executorch_program.buffer))
        return self._in_schema
