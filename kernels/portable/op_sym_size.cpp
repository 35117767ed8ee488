// Tensor-to-value ops, for programs with symbolic (dynamic) shapes and
// data-dependent scalars: aten::sym_size.int(self, dim),
// aten::sym_stride.int(self, dim), aten::sym_numel(self),
// aten::sym_storage_offset(self) (always 0: tensors here own their start)
// and aten::_local_scalar_dense(self) (Tensor.item(): Int, Double or Bool
// by dtype). They return a value, not a tensor: args = [self, (dim,)
// return], and the kernel overwrites the return slot.
//
// Self's rank and dtype are the program's, so prepare (at load) rejects a
// 0-d self, a `dim` out of range and a dtype item() cannot read, and
// installs evals that read the value without re-checking; a `dim` an
// earlier instruction changed goes to the reference eval. sym_numel and
// sym_storage_offset check nothing and have no prepare.
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/element_scalar.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

void sym_size_int(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  TL_KERNEL_CHECK(ctx, self.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; it has no dimension to take the size of");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  set_return(args, 2, EValue(static_cast<int64_t>(self.size(dim))));
}

void sym_stride_int(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  TL_KERNEL_CHECK(ctx, self.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; it has no dimension to take the stride of");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.dim(), "dim", &dim));
  set_return(args, 2, EValue(static_cast<int64_t>(self.strides()[dim])));
}

void sym_storage_offset(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 1, EValue(int64_t{0}));
}

void local_scalar_dense(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  TL_KERNEL_CHECK(ctx, self.tensor.numel() == 1, Error::kInvalidArgument,
                  "argument 'self' has %lld elements; only a one-element tensor is a Scalar",
                  static_cast<long long>(self.tensor.numel()));
  EValue value;
  TL_KERNEL_RETURN_IF_ERROR(ctx, element_to_scalar(self, 0, &value));
  set_return(args, 1, value);
}

void sym_numel(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 1, EValue(args[0]->to_tensor().numel()));
}

namespace {

// What sym_size.int and sym_stride.int reject at load, naming `what`.
Status check_dim_of(Span<EValue*> args, const char* what) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank > 0, Error::kInvalidArgument,
                     "argument 'self' is 0-d; it has no dimension to take the %s of", what);
  size_t dim = 0;
  return wrap_dim(args[1]->to_int(), rank, "dim", &dim);
}

template <bool kStride>
void size_or_stride_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  size_t dim = 0;
  if (!view_gather::wrap(args[1]->to_int(), self.dim(), &dim) || self.dim() == 0) {
    return kStride ? sym_stride_int(ctx, args) : sym_size_int(ctx, args);
  }
  set_return(args, 2, EValue(static_cast<int64_t>(kStride ? self.strides()[dim] : self.size(dim))));
}

// item() of a one-element self of dtype T.
template <typename T>
void item_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const T* data = self.const_data_ptr<T>();
  if (self.numel() != 1 || data == nullptr) return local_scalar_dense(ctx, args);
  if constexpr (std::is_same_v<T, bool>) {
    set_return(args, 1, EValue(*data));
  } else if constexpr (std::is_integral_v<T>) {
    set_return(args, 1, EValue(static_cast<int64_t>(*data)));
  } else {
    set_return(args, 1, EValue(convert<double>(*data)));
  }
}

}  // namespace

Status sym_size_int_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_dim_of(args, "size"));
  call->eval = &size_or_stride_eval<false>;
  return Error::kOk;
}

Status sym_stride_int_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_dim_of(args, "stride"));
  call->eval = &size_or_stride_eval<true>;
  return Error::kOk;
}

Status local_scalar_dense_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const ScalarType type = args[0]->to_tensor().scalar_type();
  const bool supported = visit_real_type(type, [&](auto tag) {
    call->eval = &item_eval<typename decltype(tag)::type>;
  });
  if (!supported) return unsupported_dtype("self", type, kRealTypeNames);
  return Error::kOk;
}

}  // namespace torchlight::portable
