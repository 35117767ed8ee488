// Pooling geometry shared by the pooling kernels (max_pool2d/3d_with_indices,
// avg_pool1d/2d/3d, adaptive average pooling in 1-3 dimensions,
// adaptive_max_pool2d): argument parsing with ATen's checks and output
// sizes. Every array is in the 3-D layout of SpatialView (D, H, W), with the
// dimensions an operator does not have set to kernel 1, stride 1, no padding.
// The loops themselves are in pool_loops.h. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/spatial.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Window geometry of a pooling over `spatial` (1 to 3) trailing dimensions.
struct PoolParams {
  size_t spatial = 2;
  int64_t kernel[kMaxSpatialDims] = {1, 1, 1};
  int64_t stride[kMaxSpatialDims] = {1, 1, 1};
  int64_t padding[kMaxSpatialDims] = {0, 0, 0};
  int64_t dilation[kMaxSpatialDims] = {1, 1, 1};
  bool ceil_mode = false;
};

/// ATen's pooling_output_shape: windows of a dilated kernel sliding by
/// `stride` over the padded input; with ceil_mode a last partial window
/// counts, unless it would start in the right padding.
inline int64_t pooling_output_size(int64_t input, int64_t kernel, int64_t pad, int64_t stride,
                                   int64_t dilation, bool ceil_mode) {
  int64_t size = floor_div(input + 2 * pad - dilation * (kernel - 1) - 1 +
                               (ceil_mode ? stride - 1 : 0),
                           stride) +
                 1;
  if (ceil_mode && (size - 1) * stride >= input + pad) --size;
  return size;
}

/// Checks the input of a pooling over `spatial` dimensions: [C, *spatial]
/// or [N, C, *spatial], where only N may be 0 (`rank_only`: only the rank,
/// what a program fixes). Errors: kInvalidArgument naming 'self' and its
/// shape.
inline Status check_pool_input(const NamedTensor& self, size_t spatial, bool rank_only = false) {
  const Tensor& t = self.tensor;
  bool ok = t.dim() == spatial + 1 || t.dim() == spatial + 2;
  for (size_t d = t.dim() == spatial + 2 ? 1 : 0; ok && !rank_only && d < t.dim(); ++d) {
    ok = t.size(d) > 0;
  }
  if (ok) return Error::kOk;
  char shape[128];
  return Status::error(Error::kInvalidArgument,
                       "argument '%s' has shape %s, expected %zu-D [C, *spatial] or %zu-D "
                       "[N, C, *spatial] (%zu spatial dimensions) with only N allowed to be 0",
                       self.name, format_sizes(t.sizes(), shape, sizeof(shape)), spatial + 1,
                       spatial + 2, spatial);
}

/// Reads kernel_size, stride (empty: the kernel size), padding, dilation
/// (null: 1), each a list of 1 or `spatial` values (`exact_length`: only
/// `spatial`, as the 1-D operators' int[1]), with ATen's checks: kernel,
/// stride and dilation positive, padding non-negative and at most half the
/// kernel. Errors: kInvalidArgument naming the argument.
inline Status read_pool_params(size_t spatial, bool exact_length, const EValue& kernel_size,
                               const EValue& stride, const EValue& padding,
                               const EValue* dilation, bool ceil_mode, PoolParams* p) {
  struct List {
    const EValue* value;
    const char* name;
    int64_t* dst;
    bool empty_means_kernel;
  };
  const List lists[] = {{&kernel_size, "kernel_size", p->kernel, false},
                        {&stride, "stride", p->stride, true},
                        {&padding, "padding", p->padding, false},
                        {dilation, "dilation", p->dilation, false}};
  p->spatial = spatial;
  p->ceil_mode = ceil_mode;
  const size_t lead = kMaxSpatialDims - spatial;
  for (const List& list : lists) {
    if (list.value == nullptr) continue;
    const Span<const int64_t> values = list.value->to_int_list();
    if (exact_length && values.size() != spatial && !(list.empty_means_kernel && values.empty())) {
      return Status::error(Error::kInvalidArgument, "argument '%s' has %zu values, expected %zu%s",
                           list.name, values.size(), spatial,
                           list.empty_means_kernel ? " or 0" : "");
    }
    TL_RETURN_IF_ERROR(expand_int_list(values, spatial, list.name,
                                       list.empty_means_kernel ? p->kernel + lead : nullptr,
                                       list.dst + lead));
  }
  for (size_t d = lead; d < kMaxSpatialDims; ++d) {
    const size_t i = d - lead;  // As the user counts dimensions.
    TL_CHECK_OR_RETURN(p->kernel[d] > 0, Error::kInvalidArgument,
                       "argument 'kernel_size' has %lld at dimension %zu, expected > 0",
                       static_cast<long long>(p->kernel[d]), i);
    TL_CHECK_OR_RETURN(p->stride[d] > 0, Error::kInvalidArgument,
                       "argument 'stride' has %lld at dimension %zu, expected > 0",
                       static_cast<long long>(p->stride[d]), i);
    TL_CHECK_OR_RETURN(p->dilation[d] > 0, Error::kInvalidArgument,
                       "argument 'dilation' has %lld at dimension %zu, expected > 0",
                       static_cast<long long>(p->dilation[d]), i);
    TL_CHECK_OR_RETURN(p->padding[d] >= 0 && p->padding[d] <= p->kernel[d] / 2,
                       Error::kInvalidArgument,
                       "argument 'padding' has %lld at dimension %zu, expected 0 to half the "
                       "kernel size %lld",
                       static_cast<long long>(p->padding[d]), i,
                       static_cast<long long>(p->kernel[d]));
  }
  return Error::kOk;
}

/// out's sizes for pooling `self` (checked by check_pool_input) with `p`:
/// self's leading dims, then the pooled spatial sizes. Errors:
/// kInvalidArgument when a pooled size is below 1 (a kernel larger than the
/// padded input), naming 'kernel_size' and the shapes.
inline Status pool_output_sizes(const NamedTensor& self, const PoolParams& p, SizesType* sizes) {
  const Tensor& t = self.tensor;
  const size_t first = t.dim() - p.spatial;
  const size_t lead = kMaxSpatialDims - p.spatial;
  for (size_t d = 0; d < first; ++d) sizes[d] = t.size(d);
  for (size_t i = 0; i < p.spatial; ++i) {
    const size_t d = lead + i;
    const int64_t pooled = pooling_output_size(t.size(first + i), p.kernel[d], p.padding[d],
                                               p.stride[d], p.dilation[d], p.ceil_mode);
    if (pooled < 1) {
      char shape[128];
      return Status::error(Error::kInvalidArgument,
                           "argument 'kernel_size' (%lld at dimension %zu, dilation %lld, "
                           "padding %lld) is larger than the input: argument '%s' of shape %s "
                           "would pool to size %lld",
                           static_cast<long long>(p.kernel[d]), i,
                           static_cast<long long>(p.dilation[d]),
                           static_cast<long long>(p.padding[d]), self.name,
                           format_sizes(t.sizes(), shape, sizeof(shape)),
                           static_cast<long long>(pooled));
    }
    sizes[first + i] = static_cast<SizesType>(pooled);
  }
  return Error::kOk;
}

/// Reads an adaptive pooling's output_size (`spatial` non-negative values)
/// and makes out's sizes: self's leading dims, then output_size. Errors:
/// kInvalidArgument naming 'output_size'.
inline Status adaptive_pool_output_sizes(const NamedTensor& self, const EValue& output_size,
                                         size_t spatial, SizesType* sizes) {
  const Span<const int64_t> pooled = output_size.to_int_list();
  TL_CHECK_OR_RETURN(pooled.size() == spatial, Error::kInvalidArgument,
                     "argument 'output_size' has %zu values, expected %zu", pooled.size(),
                     spatial);
  const size_t first = self.tensor.dim() - spatial;
  for (size_t d = 0; d < first; ++d) sizes[d] = self.tensor.size(d);
  return to_sizes(pooled, "argument 'output_size'", sizes + first);
}

}  // namespace torchlight::portable
