// aten::max.dim_max and aten::min.dim_min: the largest / smallest element
// along one dim, and its index.
//
// ATen semantics: the values out has self's dtype (every real type, bool
// included), the indices out int64; the first occurrence wins ties and the
// first NaN wins over everything; reducing over a dim of size 0 is an error.
// The two returns arrive as one TensorList value (the outs again), which the
// kernel leaves as it is.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The element offset of the element at row-major index `linear`.
int64_t offset_of(const Tensor& t, int64_t linear) {
  int64_t offset = 0;
  for (size_t d = t.dim(); d-- > 0;) {
    offset += (linear % t.size(d)) * t.strides()[d];
    linear /= t.size(d);
  }
  return offset;
}

template <bool kMax>
void extremum_dim(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t dim = args[1]->to_int();
  const NamedTensor values{args[3]->to_tensor(), kMax ? "max" : "min"};
  const NamedTensor indices{args[4]->to_tensor(), kMax ? "max_values" : "min_indices"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(self, values));
  TL_KERNEL_CHECK(ctx, indices.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                  "argument '%s' has dtype %s, expected int64", indices.name,
                  to_string(indices.tensor.scalar_type()));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, {&dim, 1}, false, args[2]->to_bool()));
  const int64_t empty_dim = plan.first_empty_reduced_dim(self.tensor);
  TL_KERNEL_CHECK(ctx, empty_dim < 0, Error::kInvalidArgument,
                  "argument 'dim': dim %lld of 'self' has size 0",
                  static_cast<long long>(empty_dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(values, plan.out_sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, plan.out_sizes()));

  TL_SWITCH_REAL_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const CTYPE* in = self.tensor.const_data_ptr<CTYPE>();
    CTYPE* value_data = values.tensor.mutable_data_ptr<CTYPE>();
    int64_t* index_data = indices.tensor.mutable_data_ptr<int64_t>();
    // The outs share a shape but may differ in layout: walk with the values
    // out and find the same logical element of the indices out.
    int64_t linear = 0;
    plan.for_each_output(self.tensor, values.tensor, [&](int64_t in_base, int64_t value_offset) {
      int64_t index = 0;
      int64_t best_index = 0;
      Compute best = Compute();
      plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
        const Compute x = convert<Compute>(in[offset]);
        const bool better = kMax ? x > best : x < best;
        if (index == 0 || (best == best && (x != x || better))) {
          best = x;
          best_index = index;
        }
        ++index;
      });
      value_data[value_offset] = convert<CTYPE>(best);
      index_data[offset_of(indices.tensor, linear++)] = best_index;
    });
  });
}

}  // namespace

void max_dim_max(KernelContext& ctx, Span<EValue*> args) { extremum_dim<true>(ctx, args); }

void min_dim_min(KernelContext& ctx, Span<EValue*> args) { extremum_dim<false>(ctx, args); }

}  // namespace torchlight::portable
