// aten::expand_copy.out: self broadcast to `size` (-1 keeps a dimension;
// new dimensions go in front), copied into out. Any dtype. An expand to
// self's own shape may have out in self's memory (a copy-free view,
// util/in_place.h): then nothing is copied.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"
#include "kernels/portable/util/dense_copy.h"

namespace torchlight::portable {

void expand_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> size = args[1]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  const size_t rank = self.tensor.dim();
  TL_KERNEL_CHECK(ctx, size.size() >= rank && size.size() <= kMaxTensorDim,
                  Error::kInvalidArgument,
                  "argument 'size' has %zu entries; expected at least %zu (the rank of 'self') "
                  "and at most %zu",
                  size.size(), rank, kMaxTensorDim);
  StridedView view(self.tensor);
  const size_t lead = size.size() - rank;
  for (size_t i = 0; i < size.size(); ++i) {
    const int64_t target = size[i];
    if (i < lead) {
      TL_KERNEL_CHECK(ctx, target >= 0 && target <= INT32_MAX, Error::kInvalidArgument,
                      "argument 'size' is %lld at new leading dimension %zu; it must be a size "
                      "(-1 is only allowed for existing dimensions)",
                      static_cast<long long>(target), i);
      continue;
    }
    const int64_t have = self.tensor.size(i - lead);
    TL_KERNEL_CHECK(ctx, target == -1 || target == have || (have == 1 && target >= 0 &&
                                                             target <= INT32_MAX),
                    Error::kInvalidArgument,
                    "argument 'size' is %lld at dimension %zu, but 'self' has size %lld there; "
                    "only size-1 dimensions expand",
                    static_cast<long long>(target), i, static_cast<long long>(have));
    if (target != -1 && target != have) view.set(i - lead, target, 0);
  }
  for (size_t i = 0; i < lead; ++i) view.insert(i, size[i], 0);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_reshape_to_out(self, view, out));
}

namespace {

// Self broadcast to `size` (read on every run: sizes may be computed by the
// program); false for a size the reference refuses.
constexpr auto kExpandGather = [](Span<EValue*> args, const Tensor& self,
                                  view_gather::View* view) {
  const Span<const int64_t> size = args[1]->to_int_list();
  const size_t rank = self.dim();
  if (size.size() < rank || size.size() > kMaxTensorDim) return false;
  const size_t lead = size.size() - rank;
  const Span<const SizesType> sizes = self.sizes();
  const Span<const StridesType> strides = self.strides();
  for (size_t i = 0; i < size.size(); ++i) {
    const int64_t target = size[i];
    const bool new_size = target >= 0 && target <= INT32_MAX;
    if (i < lead) {
      if (!new_size) return false;
      view->sizes[i] = static_cast<SizesType>(target);
      view->strides[i] = 0;
      continue;
    }
    const int64_t have = sizes[i - lead];
    if (target == -1 || target == have) {
      view->sizes[i] = sizes[i - lead];
      view->strides[i] = strides[i - lead];
    } else if (have == 1 && new_size) {
      view->sizes[i] = static_cast<SizesType>(target);
      view->strides[i] = 0;
    } else {
      return false;
    }
  }
  view->rank = size.size();
  view->offset = 0;
  return true;
};

}  // namespace

// The number of sizes and out's dtype are the program's: checked at load.
Status expand_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t entries = args[1]->to_int_list().size();
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(entries >= rank && entries <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'size' has %zu entries; expected at least %zu (the rank of 'self') "
                     "and at most %zu",
                     entries, rank, kMaxTensorDim);
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 3));
  view_gather::install<3, kExpandGather, &expand_copy_out>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
