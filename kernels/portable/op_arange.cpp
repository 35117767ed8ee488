// aten::arange.out (0, 1, ..., end) and aten::arange.start_out (start,
// start + step, ... before end), as ATen computes them: the length is
// ceil((end - start) / step) in double (for int64 outputs, in integers),
// and element i is start + i * step in the accumulate type (double for
// float32/float64, float for float16/bfloat16, int64 for integers), then
// converted to out's dtype. Every real dtype but bool, as in ATen.
//
// Out's rank and dtype are the program's: prepare (at load) rejects them
// and picks the loop for out's dtype; the values, which an earlier
// instruction may compute, are checked on every run.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

template <typename CTYPE>
using AccType = std::conditional_t<std::is_integral_v<CTYPE>, int64_t,
                                   std::conditional_t<kIsReducedFloat<CTYPE>, float, double>>;

template <typename CTYPE>
Status arange_typed(const EValue& start_value, const EValue& end_value, const EValue& step_value,
                    const NamedTensor& out) {
  using Acc = AccType<CTYPE>;
  const Acc start = scalar_to<Acc>(start_value);
  const Acc end = scalar_to<Acc>(end_value);
  const Acc step = scalar_to<Acc>(step_value);
  TL_CHECK_OR_RETURN(step > 0 || step < 0, Error::kInvalidArgument,
                     "argument 'step' is zero (after conversion to %s); it must be nonzero",
                     to_string(out.tensor.scalar_type()));
  TL_CHECK_OR_RETURN(std::isfinite(static_cast<double>(start)) &&
                         std::isfinite(static_cast<double>(end)),
                     Error::kInvalidArgument, "arguments 'start' and 'end' must be finite");
  TL_CHECK_OR_RETURN((step > 0 && end >= start) || (step < 0 && end <= start),
                     Error::kInvalidArgument,
                     "arguments 'start', 'end' and 'step' disagree: the range %g to %g cannot be "
                     "walked with step %g",
                     static_cast<double>(start), static_cast<double>(end),
                     static_cast<double>(step));
  double length = 0;
  if constexpr (std::is_same_v<CTYPE, int64_t>) {
    // In integers, so large ranges do not round; 128 bits cannot overflow.
    const __int128 sign = step > 0 ? 1 : -1;
    length = static_cast<double>((static_cast<__int128>(end) - start + step - sign) / step);
  } else {
    length = std::ceil((end_value.scalar_as_double() - start_value.scalar_as_double()) /
                       step_value.scalar_as_double());
  }
  TL_CHECK_OR_RETURN(length >= 0 && length <= static_cast<double>(INT32_MAX),
                     Error::kInvalidArgument,
                     "the range has %g elements, which is not a valid size", length);
  const SizesType sizes[] = {static_cast<SizesType>(length)};
  TL_RETURN_IF_ERROR(resize_tensor(out, sizes));
  TL_RETURN_IF_ERROR(check_has_data(out));
  const StridedView view(out.tensor);
  const int64_t count = static_cast<int64_t>(length);
  for (int64_t i = 0; i < count; ++i) {
    Acc element;
    if constexpr (std::is_integral_v<Acc>) {
      // The result lies between start and end, but i * step alone may not
      // fit int64: wrap in uint64, which lands on the right value.
      element = static_cast<Acc>(static_cast<uint64_t>(start) +
                                 static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
    } else {
      element = start + static_cast<Acc>(i) * step;
    }
    const CTYPE value = convert<CTYPE>(element);
    std::memcpy(view.at(i * view.stride(0)), &value, sizeof(CTYPE));
  }
  return Error::kOk;
}

void arange_impl(KernelContext& ctx, const EValue& start, const EValue& end, const EValue& step,
                 const NamedTensor& out) {
  TL_KERNEL_CHECK(ctx, out.tensor.dim() == 1, Error::kInvalidArgument,
                  "argument 'out' is %zu-D; arange produces a 1-D tensor", out.tensor.dim());
  TL_SWITCH_REAL_TYPES_NO_BOOL(out.tensor.scalar_type(), ctx, "out", CTYPE, [&] {
    TL_KERNEL_RETURN_IF_ERROR(ctx, arange_typed<CTYPE>(start, end, step, out));
  });
}

}  // namespace

void arange_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  arange_impl(ctx, EValue(int64_t{0}), *args[0], EValue(int64_t{1}), {args[1]->to_tensor(), "out"});
}

void arange_start_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  arange_impl(ctx, *args[0], *args[1], *args[2], {args[3]->to_tensor(), "out"});
}

namespace {

Status check_arange_out(const NamedTensor& out) {
  TL_CHECK_OR_RETURN(out.tensor.dim() == 1, Error::kInvalidArgument,
                     "argument 'out' is %zu-D; arange produces a 1-D tensor", out.tensor.dim());
  const ScalarType type = out.tensor.scalar_type();
  if (!visit_real_type_no_bool(type, [](auto) {})) {
    return unsupported_dtype(out.name, type, kRealTypeNoBoolNames);
  }
  return Error::kOk;
}

// arange.out is start_out with start 0 and step 1.
template <typename CTYPE, bool kHasStart>
void arange_eval(KernelContext& ctx, Span<EValue*> args) {
  constexpr size_t kOut = kHasStart ? 3 : 1;
  set_return(args, kOut + 1, *args[kOut]);
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  if constexpr (kHasStart) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, arange_typed<CTYPE>(*args[0], *args[1], *args[2], out));
  } else {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, arange_typed<CTYPE>(EValue(int64_t{0}), *args[0], EValue(int64_t{1}), out));
  }
}

template <bool kHasStart>
Status prepare_arange(Span<EValue*> args, PreparedCall* call) {
  const NamedTensor out{args[kHasStart ? 3 : 1]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_arange_out(out));
  visit_real_type_no_bool(out.tensor.scalar_type(), [&](auto tag) {
    call->eval = &arange_eval<typename decltype(tag)::type, kHasStart>;
  });
  return Error::kOk;
}

}  // namespace

Status arange_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_arange<false>(args, call);
}

Status arange_start_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_arange<true>(args, call);
}

}  // namespace torchlight::portable
