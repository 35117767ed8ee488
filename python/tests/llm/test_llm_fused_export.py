"""The KV caches updated where they live, in both lowerings:

- use_custom_op=True: torch.export wraps torchlight::sdpa_with_kv_cache in
  auto_functionalized; the program calls torchlight::sdpa_with_kv_cache.out
  with the cache buffers themselves as key_cache/value_cache, and nothing
  copies the caches back (passes/in_place_calls.py).
- use_custom_op=False: index_put (from index_copy_) writes into the buffer's
  own slot instead of a fresh tensor copied back with aten::copy.out
  (passes/buffer_writes.py).

Runtime parity: logits equal eager's (atol 1e-5, rtol 1e-5) over a prefill
and several decode steps."""

from __future__ import annotations

import pytest
import torch

import torchlight
from llm_helpers import ARCHES, MAX_SEQ, VOCAB
from torchlight.llm import export_llm
from torchlight.pte import schema

# The fused attention each model's program calls, and the position of its
# scale argument (out and the return slot follow): a float32 Llama calls
# the [B, T, H, D] form, which takes cos and sin before the scale.
FUSED = {"gpt": ("torchlight::sdpa_with_kv_cache.out", 6),
         "llama": ("torchlight::rope_sdpa_with_kv_cache.out", 8)}
NO_CHECK = torchlight.ExecutorchBackendConfig(check_kernels=False)
STEPS = [(0, 9), (9, 10), (10, 11), (11, 12), (12, MAX_SEQ)]


def _lower(model, config=NO_CHECK, edge_config=None):
    edge = torchlight.to_edge(export_llm(model), compile_config=edge_config)
    return edge.to_executorch(config)


def _calls(prog, name):
    plan = prog.program.execution_plan[0]
    return [i.instr_args.args for i in plan.chains[0].instructions
            if isinstance(i.instr_args, schema.KernelCall)
            and plan.operators[i.instr_args.op_index].qualified_name == name]


def _buffers(prog):
    """Value index -> fully qualified name of every mutable buffer."""
    plan = prog.program.execution_plan[0]
    return {i: v.val.extra_tensor_info.fully_qualified_name for i, v in enumerate(plan.values)
            if isinstance(v.val, schema.Tensor) and v.val.extra_tensor_info is not None}


def _cache_names(model):
    return sorted(n for n, _ in model.named_buffers() if n.endswith(("k_cache", "v_cache")))


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_fused_call_updates_the_buffers_themselves(arch):
    model = ARCHES[arch](use_custom_op=True)
    prog = _lower(model)
    operators = prog.operators()
    fused, scale = FUSED[arch]
    assert fused in operators
    assert "aten::copy.out" not in operators and "aten::index_put.out" not in operators
    plan = prog.program.execution_plan[0]
    buffers = _buffers(prog)
    assert sorted(buffers.values()) == _cache_names(model)
    calls = _calls(prog, fused)
    assert len(calls) == 2  # One per layer.
    written = []
    for args in calls:
        # (query, key, value, key_cache, value_cache, input_pos, [cos, sin,] scale, out,
        # return)
        assert len(args) == scale + 3
        key_cache, value_cache = buffers[args[3]], buffers[args[4]]
        assert key_cache.endswith("k_cache") and value_cache.endswith("v_cache")
        assert key_cache.rsplit(".", 2)[0] == value_cache.rsplit(".", 2)[0]  # Same layer.
        written += [key_cache, value_cache]
        out = plan.values[args[scale + 1]].val
        assert args[scale + 2] == args[scale + 1] and args[scale + 1] not in buffers
        assert out.allocation_info is not None and out.data_buffer_idx == 0
        assert isinstance(plan.values[args[scale]].val, schema.Null)  # scale=None
    assert sorted(written) == _cache_names(model)
    # No graph node is left that writes a buffer back.
    method = prog.method_graph()
    assert all(value is buffer for buffer, value in method.buffer_writes.items())


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_fused_runtime_matches_eager(runtime, kernels, arch):
    if FUSED[arch][0] not in kernels:
        pytest.skip(f"the runtime build has no kernel for {FUSED[arch][0]} yet (kernels/llm)")
    model = ARCHES[arch](use_custom_op=True)
    module = runtime.load(_lower(model, torchlight.ExecutorchBackendConfig()).buffer)
    reference = ARCHES[arch](use_custom_op=True)  # Same seed, fresh caches.
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        expected = reference(tokens)
    for a, b in STEPS:
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        torch.testing.assert_close(torch.as_tensor(logits), expected[:, a:b], atol=1e-5,
                                   rtol=1e-5)


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_plain_cache_updates_run_in_place(runtime, arch):
    model = ARCHES[arch](use_custom_op=False)
    prog = _lower(model, torchlight.ExecutorchBackendConfig())
    assert "aten::copy.out" not in prog.operators()
    plan = prog.program.execution_plan[0]
    buffers = _buffers(prog)
    updates = _calls(prog, "aten::index_put.out")
    assert len(updates) == len(buffers) == 4
    for args in updates:
        # index_put.out(self, indices, values, accumulate, out, return): self is
        # the buffer, out is the buffer's own slot.
        assert args[0] in buffers
        buffer, out = plan.values[args[0]].val, plan.values[args[4]].val
        assert out.allocation_info == buffer.allocation_info and out.data_buffer_idx == 0
    module = runtime.load(prog.buffer)
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        expected = ARCHES[arch](use_custom_op=False)(tokens)
    for a, b in STEPS:
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        torch.testing.assert_close(torch.as_tensor(logits), expected[:, a:b], atol=1e-5,
                                   rtol=1e-5)


@pytest.mark.parametrize("use_custom_op", [False, True], ids=["plain", "custom_op"])
@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_fewer_instructions_and_bytes_than_the_copying_lowering(arch, use_custom_op):
    """Against linear decomposed (weights transposed by copies) and views
    copied: fewer kernel calls, no weight copies, a smaller arena."""
    model = ARCHES[arch](use_custom_op=use_custom_op)
    new = _lower(model)
    old = _lower(model, torchlight.ExecutorchBackendConfig(check_kernels=False,
                                                           alias_views=False),
                 torchlight.EdgeCompileConfig(preserve_ops=()))
    count = lambda p: len(p.program.execution_plan[0].chains[0].instructions)  # noqa: E731
    assert count(new) < count(old)
    assert len(_calls(new, "aten::permute_copy.out")) < len(_calls(old, "aten::permute_copy.out"))
    assert new.memory_summary().total_bytes < old.memory_summary().total_bytes
    assert new.memory_summary().aliased_views > 0


class BufferUpdates(torch.nn.Module):
    """Partial updates of buffers: rows by index (index_put), a slice
    (slice_scatter), one index (a pointwise where, as core ATen decomposes
    select_scatter)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.zeros(6, 3))
        self.register_buffer("window", torch.zeros(8))
        self.register_buffer("first", torch.zeros(4, 2))

    def forward(self, x, idx):  # x: [2, 3], idx: [2] int64
        self.rows.index_copy_(0, idx, x)
        self.window[2:5] = x[0]
        self.first[1] = x[1, :2]
        return self.rows.sum(0) + self.window[:3] + self.first.sum()


def test_partial_buffer_updates_run_in_place(runtime):
    model = BufferUpdates()
    x, idx = torch.randn(2, 3), torch.tensor([4, 1])
    prog = torchlight.to_edge(torch.export.export(model, (x, idx))).to_executorch()
    plan = prog.program.execution_plan[0]
    slots = [plan.values[i].val.allocation_info for i in _buffers(prog)]
    # Each update's out is its buffer's slot (no copy back into the buffer).
    for op, out_arg in (("aten::index_put.out", 4), ("aten::slice_scatter.out", 6),
                        ("aten::where.self_out", 3)):
        (args,) = _calls(prog, op)
        assert plan.values[args[out_arg]].val.allocation_info in slots, op
    for args in _calls(prog, "aten::copy.out"):  # x[0] copied into a slice: a temporary
        assert plan.values[args[-1]].val.allocation_info not in slots
    module = runtime.load(prog.buffer)
    reference = BufferUpdates()
    for step in range(4):
        x, idx = torch.randn(2, 3), torch.tensor([step, 5 - step])
        expected = reference(x, idx)
        (actual,) = module.run("forward", [x, idx])
        torch.testing.assert_close(actual, expected, atol=1e-6, rtol=1e-6)


class NotABuffer(torch.nn.Module):
    """The fused op writing a cache that is a fresh tensor, not a buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("v_cache", torch.zeros(1, 2, 8, 4))

    def forward(self, q, k, v, pos):  # q, k, v: [1, 2, T, 4]
        k_cache = torch.zeros(1, 2, 8, 4)
        return torch.ops.torchlight.sdpa_with_kv_cache(q, k, v, k_cache, self.v_cache, pos)


def test_fused_op_on_a_non_buffer_is_an_error():
    inputs = (torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4),
              torch.arange(3))
    edge = torchlight.to_edge(torch.export.export(NotABuffer(), inputs))
    with pytest.raises(torchlight.ExportError) as info:
        edge.to_executorch(NO_CHECK)
    message = str(info.value)
    assert "node 'auto_functionalized'" in message
    assert "test_llm_fused_export.py" in message  # The user's line.
    assert "'key_cache'" in message and "not a mutable buffer" in message
