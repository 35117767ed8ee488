// Reference results for elementwise kernel tests, computed the plain way:
// the test's own broadcasting index math, arithmetic in double, then the
// test's own rounding to the out dtype (test_tensor.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable::kernel_test {

/// The logical index into a tensor of `in_sizes` of the element that
/// broadcasts to logical index `out_index` of `out_sizes`.
inline int64_t broadcast_source(const std::vector<SizesType>& in_sizes,
                                const std::vector<SizesType>& out_sizes, int64_t out_index) {
  std::vector<int64_t> coord(out_sizes.size());
  for (size_t d = out_sizes.size(); d-- > 0;) {
    coord[d] = out_index % out_sizes[d];
    out_index /= out_sizes[d];
  }
  int64_t index = 0;
  const size_t lead = out_sizes.size() - in_sizes.size();
  for (size_t d = 0; d < in_sizes.size(); ++d) {
    index = index * in_sizes[d] + (in_sizes[d] == 1 ? 0 : coord[lead + d]);
  }
  return index;
}

/// f(a, b) for every element of `out_sizes`, in double.
template <typename F>
std::vector<double> reference_binary(const TestTensor& a, const TestTensor& b,
                                     const std::vector<SizesType>& out_sizes, F f) {
  int64_t numel = 1;
  for (SizesType s : out_sizes) numel *= s;
  std::vector<double> out;
  for (int64_t i = 0; i < numel; ++i) {
    out.push_back(f(a.get(broadcast_source(a.sizes(), out_sizes, i)),
                    b.get(broadcast_source(b.sizes(), out_sizes, i))));
  }
  return out;
}

/// `value` as stored in, then read back from, a tensor of `type`.
inline double round_to(ScalarType type, double value) {
  uint64_t word = 0;
  store_double(type, &word, value);
  return load_double(type, &word);
}

inline std::vector<double> round_all(ScalarType type, std::vector<double> values) {
  for (double& v : values) v = round_to(type, v);
  return values;
}

/// Every element's raw 16-bit pattern (a float16 or bfloat16 out), in
/// logical order: for results that must match to the bit.
inline std::vector<uint16_t> all_bits(const TestTensor& t) {
  std::vector<uint16_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.bits(i));
  return out;
}

}  // namespace torchlight::portable::kernel_test
