// aten::scatter.src_out, aten::scatter.value_out and aten::scatter_add.out:
// out = self, then for every element of index (int64, self's rank),
// out[i][index[i][j][k]][k] = src[i][j][k] (for dim 1), or = value, or
// += src[i][j][k] for scatter_add. src has self's dtype and is at least as
// large as index; every index value must be in [0, self.size(dim)) and is
// checked before use. With repeated indices scatter keeps the last write
// (ATen leaves it unspecified); scatter_add sums them all. dim, the dtypes
// of index, src and out are checked at load; the installed eval (one per
// dtype for the value and add forms) checks a run's shapes, the value and
// each index.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/scatter_gather.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// What the program fixes, for every form: dim against self's rank, index's
// dtype, out's dtype (self's); `src` (null for the value form) has self's.
Status check_scatter_common(Span<EValue*> args, bool has_src) {
  const Tensor self = args[0]->to_tensor();
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  TL_RETURN_IF_ERROR(check_index_dtype({args[2]->to_tensor(), "index"}, /*allow_int32=*/false));
  if (has_src) {
    TL_RETURN_IF_ERROR(check_same_dtype({args[3]->to_tensor(), "src"}, self.scalar_type(), "self"));
  }
  return check_same_dtype({args[4]->to_tensor(), "out"}, self.scalar_type(), "self");
}

Status check_scatter_src_fixed(Span<EValue*> args) { return check_scatter_common(args, true); }

Status check_scatter_value_fixed(Span<EValue*> args) {
  const ScalarType type = args[0]->to_tensor().scalar_type();
  if (!visit_real_type(type, [](auto) {})) return unsupported_dtype("self", type, kRealTypeNames);
  return check_scatter_common(args, false);
}

Status check_scatter_add_fixed(Span<EValue*> args) {
  const ScalarType type = args[3]->to_tensor().scalar_type();
  if (!visit_real_type(type, [](auto) {})) return unsupported_dtype("src", type, kRealTypeNames);
  return check_scatter_common(args, true);
}

// What a run decides, for every form (after out goes to the return slot):
// the shapes, then out = self.
// `src` is null for the value form.
Status start_scatter(Span<EValue*> args, const NamedTensor* src, size_t* dim) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor index{args[2]->to_tensor(), "index"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", dim));
  if (index.tensor.numel() > 0) {  // ATen skips the shape checks for an empty index.
    TL_RETURN_IF_ERROR(check_scatter_gather_shapes(self, *dim, index, src));
  }
  if (src != nullptr) TL_RETURN_IF_ERROR(check_has_data(*src));
  TL_RETURN_IF_ERROR(check_has_data(index));
  return copy_view_to_out(self, StridedView(self.tensor), out);
}

void scatter_src_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor src{args[3]->to_tensor(), "src"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, start_scatter(args, &src, &dim));
  const Tensor out = args[4]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  const int64_t size = static_cast<int64_t>(out.element_size());
  const char* from = src.tensor.const_data_ptr<char>();
  char* to = out.mutable_data_ptr<char>();
  auto copy = [&](int64_t out_at, int64_t src_at) {
    std::memcpy(to + out_at * size, from + src_at * size, static_cast<size_t>(size));
  };
  TL_KERNEL_RETURN_IF_ERROR(ctx, for_each_scatter_gather(out, dim, index, src.tensor, copy));
}

template <typename CTYPE>
void scatter_value_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const EValue& value = *args[3];
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(value, kScalarTypeOf<CTYPE>, "value"));
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, start_scatter(args, nullptr, &dim));
  const Tensor out = args[4]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  const CTYPE element = scalar_to<CTYPE>(value);
  char* to = out.mutable_data_ptr<char>();
  // `index` stands in for the other tensor: the value needs no offset.
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, for_each_scatter_gather(out, dim, index, index, [&](int64_t out_at, int64_t) {
        std::memcpy(to + out_at * static_cast<int64_t>(sizeof(CTYPE)), &element, sizeof(CTYPE));
      }));
}

template <typename CTYPE>
void scatter_add_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor src{args[3]->to_tensor(), "src"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, start_scatter(args, &src, &dim));
  const Tensor out = args[4]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  using Compute = opmath_t<CTYPE>;
  constexpr int64_t kSize = sizeof(CTYPE);
  const char* from = src.tensor.const_data_ptr<char>();
  char* to = out.mutable_data_ptr<char>();
  auto accumulate = [&](int64_t out_at, int64_t src_at) {
    const Compute sum =
        opmath_add(convert<Compute>(internal::read_element<CTYPE>(to + out_at * kSize)),
                   convert<Compute>(internal::read_element<CTYPE>(from + src_at * kSize)));
    internal::write_element<CTYPE>(convert<CTYPE>(sum), to + out_at * kSize);
  };
  TL_KERNEL_RETURN_IF_ERROR(ctx, for_each_scatter_gather(out, dim, index, src.tensor, accumulate));
}

KernelFunction pick_scatter_value(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type(args[0]->to_tensor().scalar_type(),
                  [&](auto tag) { eval = &scatter_value_shaped<typename decltype(tag)::type>; });
  return eval;
}

KernelFunction pick_scatter_add(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type(args[3]->to_tensor().scalar_type(),
                  [&](auto tag) { eval = &scatter_add_shaped<typename decltype(tag)::type>; });
  return eval;
}

}  // namespace

void scatter_src_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<4, &check_scatter_src_fixed, &scatter_src_shaped>(ctx, args);
}

Status scatter_src_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_scatter_src_fixed, &scatter_src_shaped>(args, call);
}

void scatter_value_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<4, &check_scatter_value_fixed, &pick_scatter_value>(ctx,
                                                                                          args);
}

Status scatter_value_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_scatter_value_fixed, &pick_scatter_value>(args, call);
}

void scatter_add_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<4, &check_scatter_add_fixed, &pick_scatter_add>(ctx, args);
}

Status scatter_add_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_scatter_add_fixed, &pick_scatter_add>(args, call);
}

}  // namespace torchlight::portable
