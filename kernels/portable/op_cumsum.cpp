// aten::cumsum.out: running sums along `dim`.
//
// ATen semantics: the result dtype is `dtype` when given (out must have
// exactly it), else out's; elements are converted to it first. Floating
// sums accumulate in double, integer sums wrap, as ATen's CPU kernel (which
// accumulates float in double too). A 0-d tensor takes dim 0 or -1.
//
// The prepare step checks all of that but the shapes at load and, for dense
// float32/float64/int32/int64 tensors, installs a scan that sees self as
// [outer, dim, inner] and runs a block of neighbouring columns at once,
// adding in the same order.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: the dim, the dtype rules, out's dtype.
Status check_cumsum(const NamedTensor& self, const EValue& dim_arg, const EValue& dtype_arg,
                    const NamedTensor& out, size_t* dim) {
  TL_RETURN_IF_ERROR(normalize_dim(dim_arg.to_int(), self.tensor.dim(), "dim", dim));
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(read_optional_dtype(dtype_arg, "dtype", &has_dtype, &dtype));
  TL_RETURN_IF_ERROR(check_out_matches_dtype(has_dtype, dtype, out));
  TL_RETURN_IF_ERROR(check_real_dtype(out));
  return check_real_dtype(self);
}

}  // namespace

void cumsum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};

  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_cumsum(self, *args[1], *args[2], out, &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  TL_SWITCH_REAL_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    using Acc = ReduceAcc<OUT>;
    const LoadFn<OUT> load = get_load_fn<OUT>(self.tensor.scalar_type());
    if (load == nullptr) {
      TL_KERNEL_RETURN_IF_ERROR(
          ctx, unsupported_dtype("self", self.tensor.scalar_type(), kRealTypeNames));
    }
    const char* in = static_cast<const char*>(self.tensor.const_data_ptr());
    const int64_t in_size = static_cast<int64_t>(self.tensor.element_size());
    OUT* result = out.tensor.mutable_data_ptr<OUT>();
    for_each_line(self.tensor, out.tensor, dim,
                  [&](int64_t in_base, int64_t out_base, int64_t length, int64_t in_stride,
                      int64_t out_stride) {
                    Acc acc = Acc(0);
                    for (int64_t i = 0; i < length; ++i) {
                      acc = opmath_add(acc, static_cast<Acc>(
                                                load(in + (in_base + i * in_stride) * in_size)));
                      result[out_base + i * out_stride] = convert<OUT>(acc);
                    }
                  });
  });
}

namespace {

constexpr dense_reduce::Form kForm{dense_reduce::DimsKind::kInt, 1, dense_reduce::kNoKeepdim, 3};

// The prepared scan: out has self's shape, so a column of self and its
// running sums in out share offsets.
template <typename IN, typename OUT>
void cumsum_eval(KernelContext& ctx, Span<EValue*> args) {
  using Acc = ReduceAcc<OUT>;
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[3]->to_tensor();
  uint32_t mask = 0;
  if (!dense_reduce::reduced_mask(kForm, args, &mask) || !dense_path::fit_out(self, out)) {
    return cumsum_out(ctx, args);
  }
  // Self as [outer, reduced, inner] around the one dim (none for 0-d).
  size_t dim = self.dim();
  for (size_t d = 0; d < self.dim(); ++d) {
    if ((mask >> d) & 1u) dim = d;
  }
  struct {
    int64_t outer = 1, reduced = 1, inner = 1;
  } b;
  for (size_t d = 0; d < self.dim(); ++d) {
    (d < dim ? b.outer : d == dim ? b.reduced : b.inner) *= self.size(d);
  }
  const IN* in = static_cast<const IN*>(self.const_data_ptr());
  OUT* result = static_cast<OUT*>(out.mutable_data_ptr());
  if (self.numel() > 0 && (in == nullptr || result == nullptr)) return cumsum_out(ctx, args);
  set_return(args, 4, *args[3]);
  constexpr int64_t kColumns = dense_reduce::kColumns;
  for (int64_t o = 0; o < b.outer; ++o) {
    const int64_t base = o * b.reduced * b.inner;
    for (int64_t i = 0; i < b.inner; i += kColumns) {
      const int64_t width = b.inner - i < kColumns ? b.inner - i : kColumns;
      Acc acc[kColumns];
      for (int64_t j = 0; j < width; ++j) acc[j] = Acc(0);
      for (int64_t r = 0; r < b.reduced; ++r) {
        const int64_t at = base + r * b.inner + i;
        for (int64_t j = 0; j < width; ++j) {
          acc[j] = opmath_add(acc[j], static_cast<Acc>(convert<opmath_t<OUT>>(
                                          convert<OUT>(in[at + j]))));
          result[at + j] = convert<OUT>(acc[j]);
        }
      }
    }
  }
}

}  // namespace

Status cumsum_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  size_t dim = 0;
  TL_RETURN_IF_ERROR(check_cumsum(self, *args[1], *args[2], out, &dim));
  if (!dense_path::is_dense(self.tensor) || !dense_path::is_dense(out.tensor)) return Error::kOk;
  dense_reduce::visit_loop_dtype(self.tensor.scalar_type(), [&](auto in_tag) {
    dense_reduce::visit_loop_dtype(out.tensor.scalar_type(), [&](auto out_tag) {
      call->eval =
          &cumsum_eval<typename decltype(in_tag)::type, typename decltype(out_tag)::type>;
    });
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
