// aten::any.{out,dims_out,all_out} and aten::all.{out,dims_out,all_out}:
// whether any / every element over some dims is nonzero.
//
// ATen semantics: self may have any real dtype (NaN counts as nonzero); out
// must be bool or uint8, and into uint8 elements are converted to uint8
// first (so 0.5 counts as zero). any.dims / all.dims with dim None reduce every dim
// but with dim [] reduce none (the result is self != 0). Empty reductions
// give false (any) and true (all).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

template <bool kAny>
void any_all_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
                  bool reduce_all, bool keepdim, const NamedTensor& out) {
  const ScalarType out_type = out.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, out_type == ScalarType::kBool || out_type == ScalarType::kByte,
                  Error::kInvalidType, "argument 'out' has dtype %s, expected bool or uint8",
                  to_string(out_type));
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, reduce_all, keepdim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
  // Elements are converted to out's dtype first, as ATen's reduction does:
  // into a uint8 out, 0.5 becomes 0 and so is false.
  const LoadFn<bool> load = get_load_fn<bool>(self.tensor.scalar_type());
  const LoadFn<uint8_t> load_byte = get_load_fn<uint8_t>(self.tensor.scalar_type());
  const bool via_byte = out_type == ScalarType::kByte;
  if (load == nullptr) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, unsupported_dtype("self", self.tensor.scalar_type(),
                                                     kRealTypeNames));
  }
  const char* in = static_cast<const char*>(self.tensor.const_data_ptr());
  const int64_t in_size = static_cast<int64_t>(self.tensor.element_size());
  // bool and uint8 are both one byte holding 0 or 1.
  uint8_t* result = out.tensor.mutable_data_ptr<uint8_t>();
  plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
    bool acc = !kAny;
    plan.for_each_reduced(self.tensor, in_base, [&](int64_t offset) {
      const char* p = in + offset * in_size;
      const bool x = via_byte ? load_byte(p) != 0 : load(p);
      acc = kAny ? (acc || x) : (acc && x);
    });
    result[out_offset] = acc ? 1 : 0;
  });
}

template <bool kAny>
void reduce_dim_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const int64_t dim = args[1]->to_int();
  any_all_impl<kAny>(ctx, {args[0]->to_tensor(), "self"}, {&dim, 1}, false, args[2]->to_bool(),
                     {args[3]->to_tensor(), "out"});
}

template <bool kAny>
void reduce_dims_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const bool all = args[1]->is_none();
  Span<const int64_t> dims;
  if (!all) dims = args[1]->to_int_list();
  any_all_impl<kAny>(ctx, {args[0]->to_tensor(), "self"}, dims, all, args[2]->to_bool(),
                     {args[3]->to_tensor(), "out"});
}

template <bool kAny>
void reduce_all_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  any_all_impl<kAny>(ctx, {args[0]->to_tensor(), "self"}, {}, true, false,
                     {args[1]->to_tensor(), "out"});
}

}  // namespace

void any_out(KernelContext& ctx, Span<EValue*> args) { reduce_dim_out<true>(ctx, args); }
void any_dims_out(KernelContext& ctx, Span<EValue*> args) { reduce_dims_out<true>(ctx, args); }
void any_all_out(KernelContext& ctx, Span<EValue*> args) { reduce_all_out<true>(ctx, args); }
void all_out(KernelContext& ctx, Span<EValue*> args) { reduce_dim_out<false>(ctx, args); }
void all_dims_out(KernelContext& ctx, Span<EValue*> args) { reduce_dims_out<false>(ctx, args); }
void all_all_out(KernelContext& ctx, Span<EValue*> args) { reduce_all_out<false>(ctx, args); }

}  // namespace torchlight::portable
