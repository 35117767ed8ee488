// The MemoryFormat? argument of clone, _to_copy, empty and the *_like
// creation ops. At run time the layout is already decided: the exporter
// gave the out tensor the dim order the format asks for, and kernels write
// through out's strides. So the argument is only checked, never acted on.
#pragma once

#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"

namespace torchlight::portable {

/// ATen's MemoryFormat codes, as programs store them (Int).
enum class MemoryFormat : int64_t {
  kContiguous = 0,
  kPreserve = 1,
  kChannelsLast = 2,
  kChannelsLast3d = 3,
};

/// Checks a MemoryFormat? argument (None or Int) against `out`: a known
/// code, and channels-last formats only for 4-D (5-D for 3d) outs, as ATen
/// requires. Errors: kInvalidArgument naming 'memory_format'.
inline Status check_memory_format(const EValue& format, const NamedTensor& out) {
  if (format.is_none()) return Error::kOk;
  const int64_t code = format.to_int();
  TL_CHECK_OR_RETURN(code >= 0 && code <= 3, Error::kInvalidArgument,
                     "argument 'memory_format' is %lld, not a memory format (0 contiguous, "
                     "1 preserve, 2 channels_last, 3 channels_last_3d)",
                     static_cast<long long>(code));
  const size_t rank = out.tensor.dim();
  TL_CHECK_OR_RETURN(code != 2 || rank == 4, Error::kInvalidArgument,
                     "argument 'memory_format' is channels_last, which needs a 4-D tensor; "
                     "'%s' is %zu-D",
                     out.name, rank);
  TL_CHECK_OR_RETURN(code != 3 || rank == 5, Error::kInvalidArgument,
                     "argument 'memory_format' is channels_last_3d, which needs a 5-D tensor; "
                     "'%s' is %zu-D",
                     out.name, rank);
  return Error::kOk;
}

}  // namespace torchlight::portable
