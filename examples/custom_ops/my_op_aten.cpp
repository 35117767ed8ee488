// my_ops::my_op for PyTorch (export and eager): the runtime kernel wrapped
// with WRAP_TO_ATEN, registered for CPU. The export script registers the
// shape-only ("fake") implementations in Python.
#include <torch/library.h>

#include <executorch/extension/aten_util/make_aten_functor_from_et_functor.h>

#include "examples/custom_ops/my_op.h"

namespace {

at::Tensor my_op(const at::Tensor& a, double alpha) {
  at::Tensor out = at::empty_like(a, at::MemoryFormat::Contiguous);
  WRAP_TO_ATEN(custom_ops::my_op_out, 2)(a, alpha, out);
  return out;
}

}  // namespace

TORCH_LIBRARY(my_ops, m) {
  m.def("my_op(Tensor a, float alpha) -> Tensor");
  m.def("my_op.out(Tensor a, float alpha, *, Tensor(a!) out) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(my_ops, CPU, m) {
  m.impl("my_op", &my_op);
  m.impl("my_op.out", WRAP_TO_ATEN(custom_ops::my_op_out, 2));
}
