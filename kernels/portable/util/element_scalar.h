// One tensor element as a Scalar EValue, as ATen's item() gives it: Double
// for floating dtypes, Int for integers, Bool for bool. Used where a 0-d
// tensor stands for a Scalar (fill.Tensor_out, _local_scalar_dense).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/status.h"

namespace torchlight::portable {

/// Element `offset` (in elements, strides applied) of `t` into *out.
/// Errors: kInvalidType naming the argument for a dtype that is not one of
/// the ten real types; kInvalidArgument when the tensor has no data.
inline Status element_to_scalar(const NamedTensor& t, int64_t offset, EValue* out) {
  const char* data = t.tensor.const_data_ptr<char>();
  if (data == nullptr) {
    return Status::error(Error::kInvalidArgument, "argument '%s' has no data", t.name);
  }
  const bool ok = visit_real_type(t.tensor.scalar_type(), [&](auto tag) {
    using CTYPE = typename decltype(tag)::type;
    const CTYPE v = internal::read_element<CTYPE>(data + offset * int64_t{sizeof(CTYPE)});
    if constexpr (std::is_same_v<CTYPE, bool>) {
      *out = EValue(v);
    } else if constexpr (std::is_integral_v<CTYPE>) {
      *out = EValue(static_cast<int64_t>(v));
    } else {
      *out = EValue(convert<double>(v));
    }
  });
  if (!ok) return unsupported_dtype(t.name, t.tensor.scalar_type(), kRealTypeNames);
  return Error::kOk;
}

}  // namespace torchlight::portable
