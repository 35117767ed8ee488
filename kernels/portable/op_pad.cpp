// aten::reflection_pad{1,2,3}d.out and aten::replication_pad{1,2,3}d.out:
// the last k dimensions (k = 1, 2, 3) padded by mirroring (without repeating
// the edge) or by repeating the edge element. `padding` holds (before,
// after) pairs from the last dimension backwards, as in F.pad; negative
// amounts crop. Inputs have k + 1 or k + 2 (batched) dimensions, all
// non-empty except the batch. Every real dtype but bool, as in ATen.
//
// Prepare (at load) checks the rank, dtypes and padding's length; the
// installed eval checks only what a run's shapes decide (empty dims, the
// amounts against the sizes).
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

enum class PadMode { kReflect, kReplicate };

// ATen's index map from an out position `j` to the input position, for a
// dimension of `size` elements padded by `before` (negative: cropped).
int64_t source_index(PadMode mode, int64_t j, int64_t before, int64_t size) {
  const int64_t in_start = before < 0 ? -before : 0;
  const int64_t out_start = before > 0 ? before : 0;
  int64_t i = j;
  if (j < before) {
    i = mode == PadMode::kReflect ? 2 * before - j : before;
  } else if (j >= size + before) {
    i = mode == PadMode::kReflect ? 2 * (size + before - 1) - j : size + before - 1;
  }
  return i - out_start + in_start;
}

// What the program fixes, checked at load by prepare (and by the reference
// eval on every call): self's rank and dtype, out's dtype, padding's length.
Status check_pad_args(Span<EValue*> args, size_t k) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const size_t entries = args[1]->to_int_list().size();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  TL_CHECK_OR_RETURN(rank == k + 1 || rank == k + 2, Error::kInvalidArgument,
                     "argument 'self' is %zu-D; expected %zu-D or %zu-D (batched)", rank, k + 1,
                     k + 2);
  TL_CHECK_OR_RETURN(entries == 2 * k, Error::kInvalidArgument,
                     "argument 'padding' has %zu entries, expected %zu", entries, 2 * k);
  const ScalarType type = self.tensor.scalar_type();
  TL_CHECK_OR_RETURN(visit_real_type_no_bool(type, [](auto) {}), Error::kInvalidType,
                     "argument 'self' has dtype %s, which is not supported (supported: %s)",
                     to_string(type), kRealTypeNoBoolNames);
  return check_same_dtype(out, type, "self");
}

// The checks a run's shapes decide, and the copy; after check_pad_args.
void pad_shaped(KernelContext& ctx, Span<EValue*> args, PadMode mode, size_t k) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> padding = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  for (size_t d = rank == k + 2 ? 1 : 0; d < rank; ++d) {
    char shape_text[128];
    TL_KERNEL_CHECK(ctx, self.tensor.size(d) != 0, Error::kInvalidArgument,
                    "argument 'self' with shape %s is empty at dimension %zu; only the batch "
                    "dimension may be 0",
                    format_sizes(self.tensor.sizes(), shape_text, sizeof(shape_text)), d);
  }
  ShapeBuffer shape;
  shape.dim = rank;
  int64_t before[kMaxTensorDim] = {};
  for (size_t d = 0; d < rank; ++d) shape.sizes[d] = self.tensor.size(d);
  for (size_t i = 0; i < k; ++i) {
    const size_t d = rank - 1 - i;
    const int64_t size = self.tensor.size(d);
    const int64_t lo = padding[2 * i];
    const int64_t hi = padding[2 * i + 1];
    if (mode == PadMode::kReflect) {
      TL_KERNEL_CHECK(ctx, lo < size && hi < size, Error::kInvalidArgument,
                      "argument 'padding' is (%lld, %lld) at dimension %zu, but reflection "
                      "padding must be less than the input size %lld",
                      static_cast<long long>(lo), static_cast<long long>(hi), d,
                      static_cast<long long>(size));
    }
    const bool fits = lo > -(int64_t{1} << 40) && lo < (int64_t{1} << 40) &&
                      hi > -(int64_t{1} << 40) && hi < (int64_t{1} << 40);
    const int64_t result = fits ? size + lo + hi : 0;
    TL_KERNEL_CHECK(ctx, result >= 1 && result <= INT32_MAX, Error::kInvalidArgument,
                    "argument 'padding' is (%lld, %lld) at dimension %zu of size %lld, which "
                    "leaves no valid output size",
                    static_cast<long long>(lo), static_cast<long long>(hi), d,
                    static_cast<long long>(size));
    shape.sizes[d] = static_cast<SizesType>(result);
    before[d] = lo;
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  const size_t element_size = self.tensor.element_size();
  const char* in = self.tensor.const_data_ptr<char>();
  char* dst = out.tensor.mutable_data_ptr<char>();
  const Span<const StridesType> in_strides = self.tensor.strides();
  const Span<const StridesType> out_strides = out.tensor.strides();
  const size_t first_padded = rank - k;
  for (CoordWalk w(shape.span()); !w.done(); w.next()) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = w[d];
      if (d >= first_padded) {
        i = source_index(mode, i, before[d], self.tensor.size(d));
        // Guaranteed by the checks above; verified so that no padding can
        // make us read outside self.
        TL_KERNEL_CHECK(ctx, i >= 0 && i < self.tensor.size(d), Error::kInvalidArgument,
                        "argument 'padding' maps out position %lld of dimension %zu outside "
                        "the input",
                        static_cast<long long>(w[d]), d);
      }
      from += i * in_strides[d];
    }
    std::memcpy(dst + w.offset(out_strides) * static_cast<int64_t>(element_size),
                in + from * static_cast<int64_t>(element_size), element_size);
  }
}

void pad_impl(KernelContext& ctx, Span<EValue*> args, PadMode mode, size_t k) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_pad_args(args, k));
  pad_shaped(ctx, args, mode, k);
}

template <PadMode kMode, size_t kDims>
void prepared_pad_eval(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  pad_shaped(ctx, args, kMode, kDims);
}

template <PadMode kMode, size_t kDims>
Status prepare_pad(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_pad_args(args, kDims));
  call->eval = &prepared_pad_eval<kMode, kDims>;
  return Error::kOk;
}

}  // namespace

Status reflection_pad1d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReflect, 1>(args, call);
}
Status reflection_pad2d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReflect, 2>(args, call);
}
Status reflection_pad3d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReflect, 3>(args, call);
}
Status replication_pad1d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReplicate, 1>(args, call);
}
Status replication_pad2d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReplicate, 2>(args, call);
}
Status replication_pad3d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_pad<PadMode::kReplicate, 3>(args, call);
}

void reflection_pad1d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReflect, 1);
}
void reflection_pad2d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReflect, 2);
}
void reflection_pad3d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReflect, 3);
}
void replication_pad1d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReplicate, 1);
}
void replication_pad2d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReplicate, 2);
}
void replication_pad3d_out(KernelContext& ctx, Span<EValue*> args) {
  pad_impl(ctx, args, PadMode::kReplicate, 3);
}

}  // namespace torchlight::portable
