// aten::logsumexp.out: log(sum(exp(self))) over some dims, computed stably
// as m + log(sum(exp(self - m))) with m the maximum.
//
// ATen semantics: out must be floating; integer and bool inputs are
// converted to float32 (the default dtype) first; an infinite maximum is
// replaced by 0 so that all -inf gives -inf and any +inf gives +inf; NaN
// propagates; an empty reduction gives -inf. `dim` [] means every dim (ATen
// then fails for keepdim=False, an artefact of its implementation; we
// return the 0-d result). Rounded where ATen rounds (see below); sums in
// double.
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

void logsumexp_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, dims.empty(), args[2]->to_bool()));
  // Integers and bool go through float32 as in ATen; floats are read as is.
  const ScalarType in_type = self.tensor.scalar_type();
  const ScalarType compute_type = is_floating_point(in_type) ? in_type : ScalarType::kFloat;
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));

  TL_SWITCH_FLOAT_TYPES(out.tensor.scalar_type(), ctx, "out", OUT, [&] {
    TL_SWITCH_FLOAT_TYPES(compute_type, ctx, "self", CTYPE, [&] {
      using Compute = opmath_t<CTYPE>;
      using OutCompute = opmath_t<OUT>;
      const LoadFn<CTYPE> load = get_load_fn<CTYPE>(in_type);
      if (load == nullptr) {
        TL_KERNEL_RETURN_IF_ERROR(ctx, unsupported_dtype("self", in_type, kRealTypeNames));
      }
      const char* in = static_cast<const char*>(self.tensor.const_data_ptr());
      const int64_t in_size = static_cast<int64_t>(self.tensor.element_size());
      OUT* result = out.tensor.mutable_data_ptr<OUT>();
      plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
        bool first = true;
        Compute m = 0;
        plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
          const Compute x = load(in + offset * in_size);
          if (first || (m == m && (x != x || x > m))) m = x;
          first = false;
        });
        if (std::isinf(m)) m = 0;
        // As ATen: exp(self - m) rounded to self's dtype at each step, summed
        // (here in double) into out's dtype, then log and + m in out's dtype.
        double sum = 0;
        plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
          const Compute shifted = convert<Compute>(convert<CTYPE>(load(in + offset * in_size) - m));
          sum += static_cast<double>(convert<CTYPE>(std::exp(shifted)));
        });
        const OutCompute log_sum = convert<OutCompute>(
            convert<OUT>(std::log(convert<OutCompute>(convert<OUT>(sum)))));
        result[out_offset] = convert<OUT>(log_sum + convert<OutCompute>(convert<OUT>(m)));
      });
    });
  });
}

}  // namespace torchlight::portable
