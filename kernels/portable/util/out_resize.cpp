#include "kernels/portable/util/out_resize.h"

#include "kernels/portable/util/broadcast.h"
#include "runtime/core/result.h"

namespace torchlight::portable {

Status resize_tensor(const NamedTensor& out, Span<const SizesType> sizes) {
  Status status = out.tensor.resize(sizes);
  if (!status.ok()) {
    // A failed resize changes nothing, so the shape is still the old one.
    // (Formatting it on every call cost ~0.1 us a kernel call: snprintf.)
    char have[128];
    format_sizes(out.tensor.sizes(), have, sizeof(have));
    char want[128];
    return status.with_context("argument '%s' with shape %s cannot be resized to %s", out.name,
                               have, format_sizes(sizes, want, sizeof(want)));
  }
  return Error::kOk;
}

Status resize_to_broadcast_shape(Span<const NamedTensor> inputs, const NamedTensor& out) {
  BroadcastShape shape;
  TL_RETURN_IF_ERROR(compute_broadcast_shape(inputs, &shape));
  return resize_tensor(out, shape.span());
}

Status resize_to_broadcast_shape(const NamedTensor& a, const NamedTensor& b,
                                 const NamedTensor& out) {
  const NamedTensor inputs[] = {a, b};
  return resize_to_broadcast_shape(Span<const NamedTensor>(inputs), out);
}

}  // namespace torchlight::portable
