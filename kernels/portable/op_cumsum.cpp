// aten::cumsum.out: running sums along `dim`.
//
// ATen semantics: the result dtype is `dtype` when given (out must have
// exactly it), else out's; elements are converted to it first. Floating
// sums accumulate in double, integer sums wrap, as ATen's CPU kernel (which
// accumulates float in double too). A 0-d tensor takes dim 0 or -1.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

void cumsum_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};

  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, normalize_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  bool has_dtype = false;
  ScalarType dtype = ScalarType::kFloat;
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_optional_dtype(*args[2], "dtype", &has_dtype, &dtype));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_matches_dtype(has_dtype, dtype, out));
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

}  // namespace torchlight::portable
