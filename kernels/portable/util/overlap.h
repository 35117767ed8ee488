// Whether two tensors' storage may overlap, for kernels that read an input
// again after they have started writing their output. If a hostile program
// planned the output over such an input (indices, a mask), the second read
// would see the kernel's own writes: for an index, an address never
// checked. Those kernels refuse overlapping arguments up front. Header-only.
#pragma once

#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// The bytes [*begin, *end) that `t`'s elements span (strides applied).
/// False for a tensor without elements or data, which overlaps nothing.
inline bool byte_extent(const Tensor& t, uintptr_t* begin, uintptr_t* end) {
  if (t.numel() == 0 || t.const_data_ptr() == nullptr) return false;
  // Strides are non-negative and numel fits int64 (resize checked both), so
  // the last offset fits too.
  uint64_t last = 0;
  for (size_t d = 0; d < t.dim(); ++d) {
    last += static_cast<uint64_t>(t.size(d) - 1) * static_cast<uint64_t>(t.strides()[d]);
  }
  *begin = reinterpret_cast<uintptr_t>(t.const_data_ptr());
  *end = *begin + (last + 1) * t.element_size();
  return true;
}

/// Whether the bytes of `a`'s and `b`'s elements overlap (a prepared
/// eval's check; check_no_overlap reports it).
inline bool storage_overlaps(const Tensor& a, const Tensor& b) {
  uintptr_t a_begin = 0;
  uintptr_t a_end = 0;
  uintptr_t b_begin = 0;
  uintptr_t b_end = 0;
  return byte_extent(a, &a_begin, &a_end) && byte_extent(b, &b_begin, &b_end) &&
         a_begin < b_end && b_begin < a_end;
}

/// Errors: kInvalidArgument when `out`'s storage overlaps `input`'s, naming
/// both; `input` is read after `out` is written.
inline Status check_no_overlap(const NamedTensor& out, const NamedTensor& input) {
  uintptr_t out_begin = 0;
  uintptr_t out_end = 0;
  uintptr_t in_begin = 0;
  uintptr_t in_end = 0;
  if (!byte_extent(out.tensor, &out_begin, &out_end) ||
      !byte_extent(input.tensor, &in_begin, &in_end)) {
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(out_end <= in_begin || in_end <= out_begin, Error::kInvalidArgument,
                     "argument '%s' overlaps the memory of argument '%s', which the kernel reads "
                     "while writing '%s'",
                     out.name, input.name, out.name);
  return Error::kOk;
}

}  // namespace torchlight::portable
