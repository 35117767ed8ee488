// aten::pixel_shuffle.out and aten::pixel_unshuffle.out: moving r * r
// channels into an r x r spatial block and back (nn.PixelShuffle,
// nn.PixelUnshuffle). torch.export's decompositions turn both into view +
// permute + clone; these kernels serve programs that keep the operators.
//
// ATen semantics: self [*, C * r * r, H, W] shuffles to [*, C, H * r, W * r]
// with out[..., c, h * r + i, w * r + j] = self[..., (c * r + i) * r + j, h, w];
// unshuffle is the inverse ([*, C, H * r, W * r] -> [*, C * r * r, H, W]).
// Rank at least 3; r positive; the channels (shuffle) or H and W
// (unshuffle) must divide. An empty input to unshuffle keeps its shape (as
// ATen, which returns a clone). Any dtype: elements are copied as they are,
// in any layout of self and out. The rank, the factor and out's dtype are
// checked at load; the prepared eval checks only this run's shape.
#include <cstdint>
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Copies one element of `size` bytes (a fixed size lets the copy inline).
void copy_element(char* dst, const char* src, size_t size) {
  switch (size) {
    case 1: std::memcpy(dst, src, 1); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memcpy(dst, src, size); break;
  }
}

// The shuffle, walking the small tensor [*, C, H, W] (out of shuffle, self
// of unshuffle is the large one): element (b, c, h * r + i, w * r + j) of
// the large [*, C, H * r, W * r] tensor and element (b, (c * r + i) * r + j,
// h, w) of the channel-stacked [*, C * r * r, H, W] tensor correspond.
void shuffle(const Tensor& stacked, const Tensor& spatial, int64_t r, bool to_spatial) {
  const size_t dim = stacked.dim();
  const size_t element = stacked.element_size();
  const LinearOffsets stacked_batch(stacked, 0, dim - 3);
  const LinearOffsets spatial_batch(spatial, 0, dim - 3);
  int64_t batch = 1;
  for (size_t d = 0; d + 3 < dim; ++d) batch *= stacked.size(d);
  const int64_t channels = spatial.size(dim - 3);
  const int64_t height = stacked.size(dim - 2);
  const int64_t width = stacked.size(dim - 1);
  const StridesType* ss = stacked.strides().data() + dim - 3;
  const StridesType* ps = spatial.strides().data() + dim - 3;
  const char* src = (to_spatial ? stacked : spatial).const_data_ptr<char>();
  char* dst = (to_spatial ? spatial : stacked).mutable_data_ptr<char>();
  const int64_t es = static_cast<int64_t>(element);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < r; ++i) {
        for (int64_t j = 0; j < r; ++j) {
          const int64_t sc = (c * r + i) * r + j;
          for (int64_t h = 0; h < height; ++h) {
            for (int64_t w = 0; w < width; ++w) {
              const int64_t a = stacked_batch.at(b) + sc * ss[0] + h * ss[1] + w * ss[2];
              const int64_t p =
                  spatial_batch.at(b) + c * ps[0] + (h * r + i) * ps[1] + (w * r + j) * ps[2];
              copy_element(dst + (to_spatial ? p : a) * es, src + (to_spatial ? a : p) * es,
                           element);
            }
          }
        }
      }
    }
  }
}

// What the program fixes, for either direction (`factor_name` is the
// schema's): self's rank, the factor, out's dtype. Checked at load by
// prepare, and on every call by the reference eval.
Status check_shuffle_args(const NamedTensor& self, int64_t r, const char* factor_name,
                          const NamedTensor& out) {
  const Tensor& t = self.tensor;
  char shape[128];
  TL_CHECK_OR_RETURN(t.dim() >= 3, Error::kInvalidArgument,
                     "argument 'self' has shape %s, expected at least 3 dimensions [*, C, H, W]",
                     format_sizes(t.sizes(), shape, sizeof(shape)));
  TL_CHECK_OR_RETURN(r > 0 && r <= 65536, Error::kInvalidArgument,
                     "argument '%s' is %lld, expected a positive factor", factor_name,
                     static_cast<long long>(r));
  return check_same_dtype(out, t.scalar_type(), "self");
}

// The shape checks of this run and the resize; after check_shuffle_args.
Status fit_shuffled(const NamedTensor& self, int64_t r, const char* factor_name, bool to_spatial,
                    const NamedTensor& out) {
  const Tensor& t = self.tensor;
  char shape[128];
  format_sizes(t.sizes(), shape, sizeof(shape));
  const size_t dim = t.dim();
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d < dim; ++d) sizes[d] = t.size(d);
  if (to_spatial) {
    TL_CHECK_OR_RETURN(t.size(dim - 3) % (r * r) == 0, Error::kInvalidArgument,
                       "argument 'self' has shape %s, whose channels (dimension -3) are not "
                       "divisible by %s^2 = %lld",
                       shape, factor_name, static_cast<long long>(r * r));
    const int64_t h = int64_t{t.size(dim - 2)} * r;
    const int64_t w = int64_t{t.size(dim - 1)} * r;
    TL_CHECK_OR_RETURN(h <= INT32_MAX && w <= INT32_MAX, Error::kInvalidArgument,
                       "argument 'self' of shape %s shuffles to sizes beyond int32", shape);
    sizes[dim - 3] = static_cast<SizesType>(t.size(dim - 3) / (r * r));
    sizes[dim - 2] = static_cast<SizesType>(h);
    sizes[dim - 1] = static_cast<SizesType>(w);
  } else {
    TL_CHECK_OR_RETURN(t.size(dim - 2) % r == 0 && t.size(dim - 1) % r == 0,
                       Error::kInvalidArgument,
                       "argument 'self' has shape %s, whose height and width are not divisible "
                       "by %s = %lld",
                       shape, factor_name, static_cast<long long>(r));
    const int64_t c = int64_t{t.size(dim - 3)} * r * r;
    TL_CHECK_OR_RETURN(c <= INT32_MAX, Error::kInvalidArgument,
                       "argument 'self' of shape %s unshuffles to sizes beyond int32", shape);
    // ATen returns an empty input unchanged (a clone), whatever its shape.
    if (t.numel() != 0) {
      sizes[dim - 3] = static_cast<SizesType>(c);
      sizes[dim - 2] = static_cast<SizesType>(t.size(dim - 2) / r);
      sizes[dim - 1] = static_cast<SizesType>(t.size(dim - 1) / r);
    }
  }
  TL_RETURN_IF_ERROR(resize_tensor(out, {sizes, dim}));
  TL_RETURN_IF_ERROR(check_has_data(self));
  return check_has_data(out);
}

constexpr const char* factor_name(bool to_spatial) {
  return to_spatial ? "upscale_factor" : "downscale_factor";
}

// Shuffle (kToSpatial) or unshuffle, after check_shuffle_args.
template <bool kToSpatial>
void shuffle_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const int64_t r = args[1]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(ctx, fit_shuffled(self, r, factor_name(kToSpatial), kToSpatial, out));
  if (out.tensor.numel() == 0) return;
  if (kToSpatial) {
    shuffle(self.tensor, out.tensor, r, /*to_spatial=*/true);
  } else {
    shuffle(out.tensor, self.tensor, r, /*to_spatial=*/false);
  }
}

template <bool kToSpatial>
Status check_args(Span<EValue*> args) {
  return check_shuffle_args({args[0]->to_tensor(), "self"}, args[1]->to_int(),
                            factor_name(kToSpatial), {args[2]->to_tensor(), "out"});
}

template <bool kToSpatial>
void shuffle_reference(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args<kToSpatial>(args));
  shuffle_shaped<kToSpatial>(ctx, args);
}

template <bool kToSpatial>
Status prepare_shuffle(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_args<kToSpatial>(args));
  call->eval = &shuffle_shaped<kToSpatial>;
  return Error::kOk;
}

}  // namespace

void pixel_shuffle_out(KernelContext& ctx, Span<EValue*> args) {
  shuffle_reference<true>(ctx, args);
}

void pixel_unshuffle_out(KernelContext& ctx, Span<EValue*> args) {
  shuffle_reference<false>(ctx, args);
}

Status pixel_shuffle_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_shuffle<true>(args, call);
}

Status pixel_unshuffle_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_shuffle<false>(args, call);
}

}  // namespace torchlight::portable
