// aten::roll.out: out[(i + shift) mod n] = self[i] along each dimension of
// `dims` (shifts and dims pair up; a dimension listed twice rolls by the
// sum). With `dims` empty, self is rolled as if flattened (one shift).
// Any dtype. The lists and out's dtype are checked at load; the prepared
// eval only computes the amounts for a run's sizes and copies.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// shift mod n in [0, n), for n > 0, without overflow.
int64_t positive_mod(int64_t shift, int64_t n) {
  const int64_t r = shift % n;
  return r < 0 ? r + n : r;
}

// What the program fixes: the list lengths, `dims` against self's rank,
// out's dtype. Checked at load by prepare, and on every call by the
// reference eval.
Status check_roll_args(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const size_t shifts = args[1]->to_int_list().size();
  const Span<const int64_t> dims = args[2]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_CHECK_OR_RETURN(shifts != 0, Error::kInvalidArgument, "argument 'shifts' is empty");
  TL_CHECK_OR_RETURN(dims.empty() ? shifts == 1 : shifts == dims.size(), Error::kInvalidArgument,
                     "arguments 'shifts' (%zu entries) and 'dims' (%zu entries) must pair up "
                     "(or 'dims' be empty with one shift)",
                     shifts, dims.size());
  for (int64_t value : dims) {
    size_t dim = 0;
    TL_RETURN_IF_ERROR(wrap_dim(value, self.dim(), "dims", &dim));
  }
  return check_same_dtype(out, self.scalar_type(), "self");
}

// The amounts for this run's sizes, the resize and the block copies; after
// check_roll_args.
void roll_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> shifts = args[1]->to_int_list();
  const Span<const int64_t> dims = args[2]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};
  size_t rolled[kMaxTensorDim];
  int64_t amount[kMaxTensorDim] = {};  // Per dimension, in [0, size).
  size_t num_rolled = 0;
  if (!dims.empty() && self.tensor.dim() > 0) {
    for (size_t i = 0; i < dims.size(); ++i) {
      size_t dim = 0;
      TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(dims[i], self.tensor.dim(), "dims", &dim));
      const int64_t n = self.tensor.size(dim);
      if (n > 0) amount[dim] = positive_mod(amount[dim] + positive_mod(shifts[i], n), n);
    }
    for (size_t d = 0; d < self.tensor.dim(); ++d) {
      if (amount[d] != 0) rolled[num_rolled++] = d;
    }
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  const int64_t numel = self.tensor.numel();
  if (numel == 0) return;
  const StridedView src(self.tensor);
  const StridedView dst(out.tensor);

  if (dims.empty()) {
    // Flattened: out[s..n) = self[0..n-s), out[0..s) = self[n-s..n).
    const int64_t s = positive_mod(shifts[0], numel);
    copy_view_range(dst, s, src, 0, numel - s);
    copy_view_range(dst, 0, src, numel - s, s);
    return;
  }
  // Each rolled dimension splits into two blocks: out[a..n) = self[0..n-a)
  // and out[0..a) = self[n-a..n). Copy every combination of blocks.
  const uint32_t combinations = uint32_t{1} << num_rolled;
  for (uint32_t mask = 0; mask < combinations; ++mask) {
    StridedView from = src;
    StridedView to = dst;
    for (size_t i = 0; i < num_rolled; ++i) {
      const size_t d = rolled[i];
      const int64_t n = self.tensor.size(d);
      const int64_t a = amount[d];
      if ((mask >> i) & 1u) {
        from.narrow(d, n - a, a);
        to.narrow(d, 0, a);
      } else {
        from.narrow(d, 0, n - a);
        to.narrow(d, a, n - a);
      }
    }
    copy_view(to, from);
  }
}

}  // namespace

void roll_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<3, &check_roll_args, &roll_shaped>(ctx, args);
}

Status roll_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_roll_args, &roll_shaped>(args, call);
}

}  // namespace torchlight::portable
