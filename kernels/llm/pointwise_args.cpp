#include "kernels/llm/pointwise_args.h"

#include "runtime/core/result.h"

namespace torchlight::llm {

Status check_float32(const portable::NamedTensor& t) {
  TL_CHECK_OR_RETURN(t.tensor.scalar_type() == ScalarType::kFloat, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected %s (the only dtype this kernel "
                     "supports)",
                     t.name, to_string(t.tensor.scalar_type()), to_string(ScalarType::kFloat));
  return Error::kOk;
}

Status check_dense(const portable::NamedTensor& t) {
  int64_t expected = 1;
  for (size_t d = t.tensor.dim(); d-- > 0;) {
    const int64_t size = t.tensor.size(d);
    TL_CHECK_OR_RETURN(size <= 1 || t.tensor.strides()[d] == expected, Error::kInvalidArgument,
                       "argument '%s' has stride %lld in dimension %zu, expected %lld (a "
                       "contiguous, row-major tensor)",
                       t.name, static_cast<long long>(t.tensor.strides()[d]), d,
                       static_cast<long long>(expected));
    expected *= size;
  }
  return Error::kOk;
}

}  // namespace torchlight::llm
