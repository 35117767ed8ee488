// aten::any.{out,dims_out,all_out} and aten::all.{out,dims_out,all_out}:
// whether any / every element over some dims is nonzero.
//
// ATen semantics: self may have any real dtype (NaN counts as nonzero); out
// must be bool or uint8, and into uint8 elements are converted to uint8
// first (so 0.5 counts as zero). any.dims / all.dims with dim None reduce every dim
// but with dim [] reduce none (the result is self != 0). Empty reductions
// give false (any) and true (all).
//
// The prepare step checks the dtypes and dims at load and, for dense
// tensors (self float32/float64/int32/int64/bool/uint8), installs a loop
// over the reduced dims (util/dense_reduce.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_reduce.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/reduce.h"

namespace torchlight::portable {

namespace {

// The checks that need no data: out's dtype, the dims, self's dtype.
Status check_any_all(const NamedTensor& self, Span<const int64_t> dims, bool reduce_all,
                     bool keepdim, const NamedTensor& out, ReductionPlan* plan) {
  const ScalarType out_type = out.tensor.scalar_type();
  TL_CHECK_OR_RETURN(out_type == ScalarType::kBool || out_type == ScalarType::kByte,
                     Error::kInvalidType, "argument 'out' has dtype %s, expected bool or uint8",
                     to_string(out_type));
  TL_RETURN_IF_ERROR(plan->init(self, dims, reduce_all, keepdim));
  return check_real_dtype(self);
}

template <bool kAny>
void any_all_impl(KernelContext& ctx, const NamedTensor& self, Span<const int64_t> dims,
                  bool reduce_all, bool keepdim, const NamedTensor& out) {
  const ScalarType out_type = out.tensor.scalar_type();
  ReductionPlan plan;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_any_all(self, dims, reduce_all, keepdim, out, &plan));
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

// The prepared fold. IN is self's type, uint8_t standing for bool and
// uint8 (a byte is true when nonzero either way); out's bytes are 0 or 1.
// Into a uint8 out elements convert to uint8 first, as any_all_impl does.
template <bool kAny, bool kViaByte>
struct AnyAll {
  template <typename IN, typename OUT>
  struct Op {
    using Acc = bool;
    bool start() const { return !kAny; }
    void step(bool& acc, IN x, int64_t) const {
      bool truth;
      if constexpr (std::is_same_v<IN, uint8_t>) {
        truth = x != 0;
      } else if constexpr (kViaByte) {
        truth = convert<uint8_t>(x) != 0;
      } else {
        truth = convert<bool>(x);
      }
      acc = kAny ? (acc || truth) : (acc && truth);
    }
    OUT finish(bool acc, int64_t) const { return acc ? 1 : 0; }
  };
};

template <bool kAny, const dense_reduce::Form& kForm, KernelFunction reference>
Status any_all_prepare(const NamedTensor& self, Span<const int64_t> dims, bool reduce_all,
                       bool keepdim, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor out{args[kForm.out]->to_tensor(), "out"};
  ReductionPlan plan;
  TL_RETURN_IF_ERROR(check_any_all(self, dims, reduce_all, keepdim, out, &plan));
  if (!dense_reduce::loops_take_layouts(args, kForm)) {
    return Error::kOk;
  }
  auto install = [&](auto tag) {
    using IN = typename decltype(tag)::type;
    if (out.tensor.scalar_type() == ScalarType::kByte) {
      call->eval = &dense_reduce::fold_eval<
          kForm, typename AnyAll<kAny, true>::template Op<IN, uint8_t>, IN, uint8_t, reference>;
    } else {
      call->eval = &dense_reduce::fold_eval<
          kForm, typename AnyAll<kAny, false>::template Op<IN, uint8_t>, IN, uint8_t, reference>;
    }
  };
  const ScalarType self_type = self.tensor.scalar_type();
  if (self_type == ScalarType::kBool || self_type == ScalarType::kByte) {
    install(TypeTag<uint8_t>{});
  } else {
    dense_reduce::visit_loop_dtype(self_type, install);
    dense_reduce::visit_reduced_float(self_type, install);
  }
  return Error::kOk;
}

constexpr dense_reduce::Form kDimForm{dense_reduce::DimsKind::kInt, 1, 2, 3};
constexpr dense_reduce::Form kDimsForm{dense_reduce::DimsKind::kListEmptyNone, 1, 2, 3};
constexpr dense_reduce::Form kAllForm{dense_reduce::DimsKind::kAll, 0, dense_reduce::kNoKeepdim,
                                      1};

template <bool kAny, KernelFunction reference>
Status reduce_dim_prepare(Span<EValue*> args, PreparedCall* call) {
  const int64_t dim = args[1]->to_int();
  return any_all_prepare<kAny, kDimForm, reference>({args[0]->to_tensor(), "self"}, {&dim, 1},
                                                    false, args[2]->to_bool(), args, call);
}

template <bool kAny, KernelFunction reference>
Status reduce_dims_prepare(Span<EValue*> args, PreparedCall* call) {
  const bool all = args[1]->is_none();
  Span<const int64_t> dims;
  if (!all) dims = args[1]->to_int_list();
  return any_all_prepare<kAny, kDimsForm, reference>({args[0]->to_tensor(), "self"}, dims, all,
                                                     args[2]->to_bool(), args, call);
}

template <bool kAny, KernelFunction reference>
Status reduce_all_prepare(Span<EValue*> args, PreparedCall* call) {
  return any_all_prepare<kAny, kAllForm, reference>({args[0]->to_tensor(), "self"}, {}, true,
                                                    false, args, call);
}

}  // namespace

void any_out(KernelContext& ctx, Span<EValue*> args) { reduce_dim_out<true>(ctx, args); }
void any_dims_out(KernelContext& ctx, Span<EValue*> args) { reduce_dims_out<true>(ctx, args); }
void any_all_out(KernelContext& ctx, Span<EValue*> args) { reduce_all_out<true>(ctx, args); }
void all_out(KernelContext& ctx, Span<EValue*> args) { reduce_dim_out<false>(ctx, args); }
void all_dims_out(KernelContext& ctx, Span<EValue*> args) { reduce_dims_out<false>(ctx, args); }
void all_all_out(KernelContext& ctx, Span<EValue*> args) { reduce_all_out<false>(ctx, args); }

Status any_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_dim_prepare<true, &any_out>(args, call);
}
Status any_dims_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_dims_prepare<true, &any_dims_out>(args, call);
}
Status any_all_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_all_prepare<true, &any_all_out>(args, call);
}
Status all_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_dim_prepare<false, &all_out>(args, call);
}
Status all_dims_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_dims_prepare<false, &all_dims_out>(args, call);
}
Status all_all_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return reduce_all_prepare<false, &all_all_out>(args, call);
}

}  // namespace torchlight::portable
