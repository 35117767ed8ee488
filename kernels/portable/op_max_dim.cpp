// aten::max.dim_max and aten::min.dim_min: the largest / smallest element
// along one dim, and its index.
//
// ATen semantics: the values out has self's dtype (every real type, bool
// included), the indices out int64; the first occurrence wins ties and the
// first NaN wins over everything; reducing over a dim of size 0 is an error.
// The two returns arrive as one TensorList value (the outs again), which the
// kernel leaves as it is.
//
// Prepare (at load) checks the dtypes and `dim` and picks the loop for
// self's dtype; the eval checks only what a run's shape decides.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
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
NamedTensor values_out(Span<EValue*> args) {
  return {args[3]->to_tensor(), kMax ? "max" : "min"};
}

template <bool kMax>
NamedTensor indices_out(Span<EValue*> args) {
  return {args[4]->to_tensor(), kMax ? "max_values" : "min_indices"};
}

// What the program fixes: the dtypes, `dim` against self's rank. Checked at
// load by prepare, and on every call by the reference eval.
template <bool kMax>
Status check_extremum_args(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor indices = indices_out<kMax>(args);
  TL_RETURN_IF_ERROR(check_same_dtype(self, values_out<kMax>(args)));
  TL_CHECK_OR_RETURN(indices.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected int64", indices.name,
                     to_string(indices.tensor.scalar_type()));
  if (!visit_real_type(self.tensor.scalar_type(), [](auto) {})) {
    return unsupported_dtype(self.name, self.tensor.scalar_type(), kRealTypeNames);
  }
  size_t dim = 0;
  return wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim);
}

// The plan for this run's shape, the outs resized, and the scan; after
// check_extremum_args, with self of dtype CTYPE.
template <bool kMax, typename CTYPE>
void extremum_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t dim = args[1]->to_int();
  const NamedTensor values = values_out<kMax>(args);
  const NamedTensor indices = indices_out<kMax>(args);
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, {&dim, 1}, false, args[2]->to_bool()));
  const int64_t empty_dim = plan.first_empty_reduced_dim(self.tensor);
  TL_KERNEL_CHECK(ctx, empty_dim < 0, Error::kInvalidArgument,
                  "argument 'dim': dim %lld of 'self' has size 0",
                  static_cast<long long>(empty_dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(values, plan.out_sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, plan.out_sizes()));

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
}

template <bool kMax>
void extremum_dim(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_extremum_args<kMax>(args));
  TL_SWITCH_REAL_TYPES(args[0]->to_tensor().scalar_type(), ctx, "self", CTYPE,
                       [&] { extremum_shaped<kMax, CTYPE>(ctx, args); });
}

template <bool kMax>
Status prepare_extremum(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_extremum_args<kMax>(args));
  visit_real_type(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &extremum_shaped<kMax, typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace

void max_dim_max(KernelContext& ctx, Span<EValue*> args) { extremum_dim<true>(ctx, args); }

void min_dim_min(KernelContext& ctx, Span<EValue*> args) { extremum_dim<false>(ctx, args); }

Status max_dim_max_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_extremum<true>(args, call);
}

Status min_dim_min_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_extremum<false>(args, call);
}

}  // namespace torchlight::portable
