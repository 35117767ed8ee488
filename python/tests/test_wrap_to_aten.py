"""WRAP_TO_ATEN over every argument kind: an unboxed kernel taking an
optional tensor, a Scalar, an int list, a tensor list and a bool, and one
that shrinks its out tensor, registered with TORCH_LIBRARY and called from
PyTorch, against torch computing the same thing.

Needs torch's C++ headers (see test_custom_ops_example.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from helpers import REPO
from test_custom_ops_example import BUILD_DIR, torch_headers_available

pytestmark = pytest.mark.skipif(not torch_headers_available(),
                                reason="torch's C++ headers are not installed (libtorch-dev)")

SOURCE = r"""
#include <torch/library.h>

#include <executorch/extension/aten_util/make_aten_functor_from_et_functor.h>

#include "extension/kernel_util/unboxed_kernel.h"

namespace {

using torchlight::Scalar;
using torchlight::Span;
using torchlight::Tensor;

// out = (a * s + bias + sum(list) + sum(dims)) * (negate ? -1 : 1).
Tensor& mix_out(const Tensor& a, std::optional<Tensor> bias, Scalar s, Span<const int64_t> dims,
                Span<const Tensor> list, bool negate, Tensor& out) {
  double offset = 0;
  for (int64_t d : dims) offset += static_cast<double>(d);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = a.const_data_ptr<float>()[i] * s.to<double>() + offset;
    if (bias) v += bias->const_data_ptr<float>()[i];
    for (const Tensor& t : list) v += t.const_data_ptr<float>()[i];
    out.mutable_data_ptr<float>()[i] = static_cast<float>(negate ? -v : v);
  }
  return out;
}

// out = a[:n], shrinking out (1-D float).
Tensor& head_out(torchlight::KernelContext& ctx, const Tensor& a, int64_t n, Tensor& out) {
  if (n < 0 || n > a.numel()) {
    ctx.fail(torchlight::Status::error(torchlight::Error::kInvalidArgument, "head: n=%lld out of range",
                                       static_cast<long long>(n)));
    return out;
  }
  const torchlight::SizesType sizes[1] = {static_cast<torchlight::SizesType>(n)};
  torchlight::Status resized = out.resize(Span<const torchlight::SizesType>(sizes, 1));
  if (!resized.ok()) {
    ctx.fail(resized);
    return out;
  }
  for (int64_t i = 0; i < n; ++i) out.mutable_data_ptr<float>()[i] = a.const_data_ptr<float>()[i];
  return out;
}

}  // namespace

TORCH_LIBRARY(tl_wrap_test, m) {
  m.def("mix.out(Tensor a, Tensor? bias, Scalar s, int[] dims, Tensor[] list, bool negate, *, "
        "Tensor(a!) out) -> Tensor(a!)", WRAP_TO_ATEN(mix_out, 6));
  m.def("head.out(Tensor a, int n, *, Tensor(a!) out) -> Tensor(a!)", WRAP_TO_ATEN(head_out, 2));
}
"""


@pytest.fixture(scope="module")
def ops():
    from torch.utils import cpp_extension
    includes = [str(REPO), str(REPO / "compat" / "include")]
    if os.environ.get("TORCHLIGHT_TORCH_INCLUDE"):
        includes.append(os.environ["TORCHLIGHT_TORCH_INCLUDE"])
    ext_dir = BUILD_DIR / "wrap_to_aten_test_ext"
    ext_dir.mkdir(parents=True, exist_ok=True)
    source = ext_dir / "tl_wrap_to_aten_test.cpp"
    if not source.is_file() or source.read_text() != SOURCE:
        source.write_text(SOURCE)
    # load (not load_inline, whose prelude needs torch's whole C++ API headers).
    cpp_extension.load(
        name="tl_wrap_to_aten_test", sources=[str(source)], extra_include_paths=includes,
        extra_ldflags=[str(BUILD_DIR / "runtime" / "libtorchlight_core.a")],
        build_directory=str(ext_dir), is_python_module=False)
    return torch.ops.tl_wrap_test


def test_every_argument_kind(ops):
    a, bias = torch.randn(6), torch.randn(6)
    l0, l1 = torch.randn(6), torch.randn(6)
    out = torch.empty(6)
    result = ops.mix.out(a, bias, 1.5, [2, 3], [l0, l1], False, out=out)
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, a * 1.5 + 5 + bias + l0 + l1)
    # None for the optional tensor, an int Scalar, an empty list, negate.
    ops.mix.out(a, None, 2, [], [], True, out=out)
    torch.testing.assert_close(out, -(a * 2))


def test_out_resized_by_the_kernel_is_resized_in_torch(ops):
    a = torch.arange(8, dtype=torch.float32)
    out = torch.empty(8)
    ops.head.out(a, 3, out=out)
    assert out.shape == (3,)
    torch.testing.assert_close(out, a[:3])


def test_kernel_failure_raises(ops):
    with pytest.raises(RuntimeError, match="n=9 out of range"):
        ops.head.out(torch.zeros(4), 9, out=torch.empty(4))
