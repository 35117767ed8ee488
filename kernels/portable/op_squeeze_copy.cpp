// aten::squeeze_copy.out (drop every size-1 dimension), .dim_out (drop
// `dim` if its size is 1) and .dims_out (drop those of `dim` that have size
// 1). Any dtype; the data is copied into out's layout, or not at all when
// out shares self's memory (a copy-free view, util/in_place.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

namespace {

// Self without the dimensions marked in `drop` that have size 1.
Status squeeze_into(const NamedTensor& self, const bool* drop, const NamedTensor& out) {
  StridedView view(self.tensor);
  for (size_t d = self.tensor.dim(); d-- > 0;) {
    if (drop[d] && self.tensor.size(d) == 1) view.select(d, 0);
  }
  return copy_reshape_to_out(self, view, out);
}

}  // namespace

void squeeze_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  bool drop[kMaxTensorDim];
  for (bool& d : drop) d = true;
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

void squeeze_copy_dim_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  bool drop[kMaxTensorDim] = {};
  drop[dim] = self.tensor.dim() > 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

void squeeze_copy_dims_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  bool drop[kMaxTensorDim] = {};
  for (int64_t value : dims) {
    size_t dim = 0;
    TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(value, self.tensor.dim(), "dim", &dim));
    TL_KERNEL_CHECK(ctx, !drop[dim] || self.tensor.dim() == 0, Error::kInvalidArgument,
                    "argument 'dim' lists dimension %zu more than once", dim);
    drop[dim] = self.tensor.dim() > 0;
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

// ---- Prepared: the shape is self's without the marked size-1 dims, and
// the bytes move as in any reshape (dense_copy::reshape_copy_eval).

namespace {

// Self's sizes without those dims d with drop(d) whose size is 1.
template <typename Drop>
void squeezed_sizes(const Tensor& self, const Drop& drop, SizesType* sizes, size_t* rank) {
  size_t n = 0;
  for (size_t d = 0; d < self.dim(); ++d) {
    if (!(drop(d) && self.size(d) == 1)) sizes[n++] = self.size(d);
  }
  *rank = n;
}

constexpr auto kSqueezeAllShape = [](Span<EValue*> args, SizesType* sizes, size_t* rank) {
  squeezed_sizes(args[0]->to_tensor(), [](size_t) { return true; }, sizes, rank);
  return true;
};

constexpr auto kSqueezeDimShape = [](Span<EValue*> args, SizesType* sizes, size_t* rank) {
  const Tensor self = args[0]->to_tensor();
  size_t dim = 0;
  if (!view_gather::wrap(args[1]->to_int(), self.dim(), &dim)) return false;
  squeezed_sizes(self, [dim](size_t d) { return d == dim; }, sizes, rank);
  return true;
};

constexpr auto kSqueezeDimsShape = [](Span<EValue*> args, SizesType* sizes, size_t* rank) {
  const Tensor self = args[0]->to_tensor();
  uint32_t marked = 0;  // kMaxTensorDim <= 32 bits.
  for (int64_t value : args[1]->to_int_list()) {
    size_t dim = 0;
    if (!view_gather::wrap(value, self.dim(), &dim)) return false;
    if ((marked >> dim & 1u) != 0 && self.dim() > 0) return false;
    marked |= 1u << dim;
  }
  squeezed_sizes(self, [marked](size_t d) { return (marked >> d & 1u) != 0; }, sizes, rank);
  return true;
};

}  // namespace

// Out's dtype is the program's: checked at load.
Status squeeze_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 1));
  call->eval = &dense_copy::reshape_copy_eval<1, kSqueezeAllShape, &squeeze_copy_out>;
  return Error::kOk;
}

// `dim` and out's dtype are the program's: checked at load.
Status squeeze_copy_dim_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), args[0]->to_tensor().dim(), "dim", &dim));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::reshape_copy_eval<2, kSqueezeDimShape, &squeeze_copy_dim_out>;
  return Error::kOk;
}

// `dim` and out's dtype are the program's: checked at load, with the
// reference's messages.
Status squeeze_copy_dims_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  bool seen[kMaxTensorDim] = {};
  for (int64_t value : args[1]->to_int_list()) {
    size_t dim = 0;
    TL_RETURN_IF_ERROR(wrap_dim(value, rank, "dim", &dim));
    TL_CHECK_OR_RETURN(!seen[dim] || rank == 0, Error::kInvalidArgument,
                       "argument 'dim' lists dimension %zu more than once", dim);
    seen[dim] = true;
  }
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::reshape_copy_eval<2, kSqueezeDimsShape, &squeeze_copy_dims_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
