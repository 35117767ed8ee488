// aten::index_put.out: out = self, then out[indices] = values (or +=
// values with accumulate), with ATen's advanced indexing
// (util/advanced_index.h). values has self's dtype and broadcasts to the
// shape of self[indices]. With repeated indices and accumulate=False the
// last write wins (ATen leaves it unspecified); with accumulate they all
// add up (bool: or). Every index is checked before use. out may be self
// itself (a mutable buffer updated in place, util/in_place.h): then the
// first step is skipped. The index entries' kinds, dtypes and ranks and
// the dtypes of values and out are checked at load; the installed eval (one
// per dtype) checks the shapes and index values of a run.
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
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: the index entries against self's rank, the
// dtypes of values and out (self's), self's dtype (real).
Status check_index_put_fixed(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const ScalarType dtype = self.scalar_type();
  TL_RETURN_IF_ERROR(check_index_entries(self, args[1]->to_tensor_list(), "indices"));
  TL_RETURN_IF_ERROR(check_same_dtype({args[2]->to_tensor(), "values"}, dtype, "self"));
  TL_RETURN_IF_ERROR(check_same_dtype({args[4]->to_tensor(), "out"}, dtype, "self"));
  if (!visit_real_type(dtype, [](auto) {})) return unsupported_dtype("self", dtype, kRealTypeNames);
  return Error::kOk;
}

// The shaped eval for self's dtype, after check_index_put_fixed.
template <typename CTYPE>
void index_put_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor values{args[2]->to_tensor(), "values"};
  const bool accumulate = args[3]->to_bool();
  const NamedTensor out{args[4]->to_tensor(), "out"};
  AdvancedIndex index;
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.init(self.tensor, args[1]->to_tensor_list(), "indices"));
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
  constexpr int64_t kSize = sizeof(CTYPE);
  if (!accumulate) {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, index.for_each(out.tensor.strides(), other, [&](int64_t out_at, int64_t value_at) {
          std::memcpy(to + out_at * kSize, from + value_at * kSize, sizeof(CTYPE));
        }));
    return;
  }
  using Compute = opmath_t<CTYPE>;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, index.for_each(out.tensor.strides(), other, [&](int64_t out_at, int64_t value_at) {
        const Compute sum =
            opmath_add(convert<Compute>(internal::read_element<CTYPE>(to + out_at * kSize)),
                       convert<Compute>(internal::read_element<CTYPE>(from + value_at * kSize)));
        internal::write_element<CTYPE>(convert<CTYPE>(sum), to + out_at * kSize);
      }));
}

KernelFunction pick_index_put(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type(args[0]->to_tensor().scalar_type(),
                  [&](auto tag) { eval = &index_put_shaped<typename decltype(tag)::type>; });
  return eval;
}

}  // namespace

void index_put_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<4, &check_index_put_fixed, &pick_index_put>(ctx, args);
}

Status index_put_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_index_put_fixed, &pick_index_put>(args, call);
}

}  // namespace torchlight::portable
