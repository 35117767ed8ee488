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

Status check_norm_weight(const portable::NamedTensor& weight, int64_t dim) {
  TL_CHECK_OR_RETURN(weight.tensor.size(0) == dim, Error::kInvalidArgument,
                     "argument '%s' has %d elements, expected D = %lld (the last size of "
                     "input)",
                     weight.name, weight.tensor.size(0), static_cast<long long>(dim));
  return Error::kOk;
}

int64_t norm_min_rows_per_chunk(int64_t dim) {
  constexpr int64_t kMinChunkElements = 16384;
  return kMinChunkElements / dim > 1 ? kMinChunkElements / dim : 1;
}

Status check_same_sizes(const portable::NamedTensor& t, const portable::NamedTensor& like) {
  bool same = t.tensor.dim() == like.tensor.dim();
  for (size_t d = 0; same && d < t.tensor.dim(); ++d) {
    same = t.tensor.size(d) == like.tensor.size(d);
  }
  char want[128];
  char got[128];
  TL_CHECK_OR_RETURN(same, Error::kInvalidArgument,
                     "argument '%s' has sizes %s, expected the sizes of '%s', %s", t.name,
                     format_sizes(t.tensor.sizes(), got, sizeof(got)), like.name,
                     format_sizes(like.tensor.sizes(), want, sizeof(want)));
  return Error::kOk;
}

}  // namespace torchlight::llm
