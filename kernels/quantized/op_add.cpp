// quantized_decomposed::add.out: out = quantize(dequantize(a) + dequantize(b))
// elementwise, with torch's per-tensor arithmetic for each step
// (dequantize: (float(q) - zp) * float(scale); quantize: clamp(round(v *
// float(1 / scale)) + zp, qmin, qmax)). a, b and out share one shape and one
// quantized dtype (no broadcasting, as upstream). Each range is checked
// against the dtype; out_scale must be finite and > 0.
#include <cmath>

#include "kernels/quantized/quant_common.h"
#include "kernels/quantized/quantized_ops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight::quantized {
namespace {

Status check_add(Span<EValue*> args) {
  const NamedTensor a{args[0]->to_tensor(), "a"};
  const ScalarType dtype = a.tensor.scalar_type();
  int64_t low = 0, high = 0;
  TL_CHECK_OR_RETURN(quant_bounds(dtype, &low, &high), Error::kInvalidType,
                     "argument 'a' has dtype %s, expected %s", to_string(dtype),
                     kQuantIntTypeNames);
  TL_RETURN_IF_ERROR(check_dtype({args[5]->to_tensor(), "b"}, dtype));
  TL_RETURN_IF_ERROR(check_dtype({args[14]->to_tensor(), "out"}, dtype));
  TL_RETURN_IF_ERROR(check_quant_range(args[3]->to_int(), args[4]->to_int(), dtype, "a_"));
  TL_RETURN_IF_ERROR(check_quant_range(args[8]->to_int(), args[9]->to_int(), dtype, "b_"));
  TL_RETURN_IF_ERROR(check_quant_range(args[12]->to_int(), args[13]->to_int(), dtype, "out_"));
  return check_scale_value(args[10]->to_double(), "out_scale");
}

}  // namespace

Status add_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) { return check_add(args); }

void add_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_add(args));
  const NamedTensor a{args[0]->to_tensor(), "a"};
  const NamedTensor b{args[5]->to_tensor(), "b"};
  const NamedTensor out{args[14]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, a.tensor.dim() == b.tensor.dim(), Error::kInvalidArgument,
                  "arguments 'a' and 'b' must have the same shape (ranks %zu and %zu)",
                  a.tensor.dim(), b.tensor.dim());
  for (size_t d = 0; d < a.tensor.dim(); ++d) {
    TL_KERNEL_CHECK(ctx, a.tensor.size(d) == b.tensor.size(d), Error::kInvalidArgument,
                    "arguments 'a' and 'b' must have the same shape (dimension %zu: %d vs %d)",
                    d, a.tensor.size(d), b.tensor.size(d));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, a.tensor.sizes()));
  for (const NamedTensor* t : {&a, &b, &out}) TL_KERNEL_RETURN_IF_ERROR(ctx, check_contiguous(*t));
  const float a_scale = static_cast<float>(args[1]->to_double());
  const float a_zp = static_cast<float>(args[2]->to_int());
  const float b_scale = static_cast<float>(args[6]->to_double());
  const float b_zp = static_cast<float>(args[7]->to_int());
  const float inv_scale = static_cast<float>(1.0 / args[10]->to_double());
  const float out_zp = static_cast<float>(args[11]->to_int());
  const float qmin = static_cast<float>(args[12]->to_int());
  const float qmax = static_cast<float>(args[13]->to_int());
  visit_quant_int_type(a.tensor.scalar_type(), [&](auto tag) {
    using Q = typename decltype(tag)::type;
    const Q* x = a.tensor.const_data_ptr<Q>();
    const Q* y = b.tensor.const_data_ptr<Q>();
    Q* z = out.tensor.mutable_data_ptr<Q>();
    for (int64_t i = 0; i < a.tensor.numel(); ++i) {
      const float sum = (static_cast<float>(x[i]) - a_zp) * a_scale +
                        (static_cast<float>(y[i]) - b_zp) * b_scale;
      z[i] = clamp_to_quant<Q>(std::nearbyint(sum * inv_scale) + out_zp, qmin, qmax);
    }
  });
  set_return(args, 15, *args[14]);
}

}  // namespace torchlight::quantized
