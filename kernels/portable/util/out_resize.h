// Resizing a kernel's out tensor to the shape of its result.
#pragma once

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Resizes `out` to `sizes` (Tensor::resize: a STATIC tensor only keeps its
/// sizes, a DYNAMIC_BOUND one stays within its planned capacity, and the rank
/// never changes). Errors: kInvalidArgument naming the argument, its current
/// shape and `sizes`, followed by the reason.
Status resize_tensor(const NamedTensor& out, Span<const SizesType> sizes);

/// Resizes `out` to the broadcast shape of `inputs`. Errors: as
/// compute_broadcast_shape (inputs that don't broadcast) and resize_tensor.
Status resize_to_broadcast_shape(Span<const NamedTensor> inputs, const NamedTensor& out);
Status resize_to_broadcast_shape(const NamedTensor& a, const NamedTensor& b,
                                 const NamedTensor& out);

}  // namespace torchlight::portable
