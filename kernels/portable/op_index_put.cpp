// aten::index_put.out: out = self, then out[indices] = values (or +=
// values with accumulate), with ATen's advanced indexing
// (util/advanced_index.h). values has self's dtype and broadcasts to the
// shape of self[indices]. With repeated indices and accumulate=False the
// last write wins (ATen leaves it unspecified); with accumulate they all
// add up (bool: or). Every index is checked before use. out may be self
// itself (a mutable buffer updated in place, util/in_place.h): then the
// first step is skipped.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void index_put_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor values{args[2]->to_tensor(), "values"};
  const bool accumulate = args[3]->to_bool();
  const NamedTensor out{args[4]->to_tensor(), "out"};
  AdvancedIndex index;
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.init(self.tensor, args[1]->to_tensor_list(), "indices"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(values, self.tensor.scalar_type(), "self"));
  if (!broadcasts_to(values.tensor.sizes(), index.shape())) {
    char have[128];
    char want[128];
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'values' with shape %s does not broadcast to the indexing result "
                    "shape %s",
                    format_sizes(values.tensor.sizes(), have, sizeof(have)),
                    format_sizes(index.shape(), want, sizeof(want)));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(values));
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_reshape_to_out(self, StridedView(self.tensor), out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.check_no_overlap_with(out));

  // values' strides over the result shape, 0 where it broadcasts.
  const Span<const SizesType> shape = index.shape();
  int64_t value_strides[kMaxTensorDim] = {};
  const size_t lead = shape.size() - values.tensor.dim();
  for (size_t d = 0; d < values.tensor.dim(); ++d) {
    if (values.tensor.size(d) == shape[lead + d]) {
      value_strides[lead + d] = values.tensor.strides()[d];
    }
  }
  const Span<const int64_t> other{value_strides, shape.size()};
  const char* from = values.tensor.const_data_ptr<char>();
  char* to = out.tensor.mutable_data_ptr<char>();
  if (!accumulate) {
    const int64_t size = static_cast<int64_t>(out.tensor.element_size());
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, index.for_each(out.tensor.strides(), other, [&](int64_t out_at, int64_t value_at) {
          std::memcpy(to + out_at * size, from + value_at * size, static_cast<size_t>(size));
        }));
    return;
  }
  TL_SWITCH_REAL_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    constexpr int64_t kSize = sizeof(CTYPE);
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, index.for_each(out.tensor.strides(), other, [&](int64_t out_at, int64_t value_at) {
          const Compute sum =
              opmath_add(convert<Compute>(internal::read_element<CTYPE>(to + out_at * kSize)),
                         convert<Compute>(internal::read_element<CTYPE>(from + value_at * kSize)));
          internal::write_element<CTYPE>(convert<CTYPE>(sum), to + out_at * kSize);
        }));
  });
}

}  // namespace torchlight::portable
