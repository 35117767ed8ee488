// aten::roll.out: out[(i + shift) mod n] = self[i] along each dimension of
// `dims` (shifts and dims pair up; a dimension listed twice rolls by the
// sum). With `dims` empty, self is rolled as if flattened (one shift).
// Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
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

}  // namespace

void roll_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> shifts = args[1]->to_int_list();
  const Span<const int64_t> dims = args[2]->to_int_list();
  const NamedTensor out{args[3]->to_tensor(), "out"};

  TL_KERNEL_CHECK(ctx, !shifts.empty(), Error::kInvalidArgument, "argument 'shifts' is empty");
  TL_KERNEL_CHECK(ctx, dims.empty() ? shifts.size() == 1 : shifts.size() == dims.size(),
                  Error::kInvalidArgument,
                  "arguments 'shifts' (%zu entries) and 'dims' (%zu entries) must pair up "
                  "(or 'dims' be empty with one shift)",
                  shifts.size(), dims.size());
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
  } else if (!dims.empty()) {
    size_t dim = 0;  // 0-d: validate the dims, nothing moves.
    for (int64_t value : dims) {
      TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(value, 0, "dims", &dim));
    }
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
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

}  // namespace torchlight::portable
