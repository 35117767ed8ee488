// aten::scatter.src_out, aten::scatter.value_out and aten::scatter_add.out:
// out = self, then for every element of index (int64, self's rank),
// out[i][index[i][j][k]][k] = src[i][j][k] (for dim 1), or = value, or
// += src[i][j][k] for scatter_add. src has self's dtype and is at least as
// large as index; every index value must be in [0, self.size(dim)) and is
// checked before use. With repeated indices scatter keeps the last write
// (ATen leaves it unspecified); scatter_add sums them all.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/scatter_gather.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// The common start: checks, then out = self. `src` is null for the value form.
Status prepare(Span<EValue*> args, const NamedTensor* src, size_t* dim) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor index{args[2]->to_tensor(), "index"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", dim));
  TL_RETURN_IF_ERROR(check_index_dtype(index, /*allow_int32=*/false));
  if (index.tensor.numel() > 0) {  // ATen skips the shape checks for an empty index.
    TL_RETURN_IF_ERROR(check_scatter_gather_shapes(self, *dim, index, src));
  }
  if (src != nullptr) {
    TL_RETURN_IF_ERROR(check_same_dtype(*src, self.tensor.scalar_type(), "self"));
    TL_RETURN_IF_ERROR(check_has_data(*src));
  }
  TL_RETURN_IF_ERROR(check_has_data(index));
  return copy_view_to_out(self, StridedView(self.tensor), out);
}

}  // namespace

void scatter_src_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor src{args[3]->to_tensor(), "src"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare(args, &src, &dim));
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

void scatter_value_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const EValue& value = *args[3];
  const ScalarType type = args[0]->to_tensor().scalar_type();
  TL_KERNEL_CHECK(ctx, visit_real_type(type, [](auto) {}), Error::kInvalidType,
                  "argument 'self' has dtype %s, which is not supported (supported: %s)",
                  to_string(type), kRealTypeNames);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(value, type, "value"));
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare(args, nullptr, &dim));
  const Tensor out = args[4]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  TL_SWITCH_REAL_TYPES(type, ctx, "self", CTYPE, [&] {
    const CTYPE element = scalar_to<CTYPE>(value);
    char* to = out.mutable_data_ptr<char>();
    // `index` stands in for the other tensor: the value needs no offset.
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, for_each_scatter_gather(out, dim, index, index, [&](int64_t out_at, int64_t) {
          std::memcpy(to + out_at * static_cast<int64_t>(sizeof(CTYPE)), &element, sizeof(CTYPE));
        }));
  });
}

void scatter_add_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor src{args[3]->to_tensor(), "src"};
  const ScalarType type = src.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, visit_real_type(type, [](auto) {}), Error::kInvalidType,
                  "argument 'src' has dtype %s, which is not supported (supported: %s)",
                  to_string(type), kRealTypeNames);
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare(args, &src, &dim));
  const Tensor out = args[4]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  TL_SWITCH_REAL_TYPES(type, ctx, "self", CTYPE, [&] {
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
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, for_each_scatter_gather(out, dim, index, src.tensor, accumulate));
  });
}

}  // namespace torchlight::portable
