// Prepared dense paths for the reductions (sum, mean, prod, amax/amin,
// argmax/argmin, var/std, any/all) and cumsum.
//
// A reduction's prepare step (runtime/kernel/kernel.h) runs the reference's
// own argument checks once, at load (dims in range and not repeated, the
// dtype rules, keepdim), so a bad call fails there with the argument named.
// When self's and out's strides follow their dim orders (any: contiguous,
// channels-last, permuted) and the dtypes are ones the loops handle, it
// installs an eval specialised for the dtypes. That eval walks the kept
// dims and, for each output, the reduced dims (any set of them, adjacent
// or not) row-major through self's strides (Walk). A kept dim with stride
// 1 in both self and out becomes `inner`: a block of up to kColumns
// neighbouring outputs is reduced together, row by row, so the inner loop
// runs over contiguous memory; without one, each output is a sweep.
//
// Every output element still sees its inputs in the reference's order (the
// reduced dims row-major), with the reference's conversions and
// accumulator types, so results are bit-identical. The eval re-reads the
// dims and keepdim (an earlier instruction may compute them) and hands
// anything it does not cover (a dim list that changed, a failed resize,
// an empty reduction with no identity, missing data) to the reference,
// which checks everything and reports errors as before.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "runtime/core/evalue.h"
#include "runtime/core/half.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::dense_reduce {

/// How an overload names the dims it reduces.
enum class DimsKind : uint8_t {
  kAll,            // No dim argument: every dim (sum.out, any.all_out...).
  kList,           // int[]? dim: None or [] means every dim (sum, mean, amax, var).
  kListEmptyNone,  // int[]? dim: None means every dim, [] none (any.dims, all.dims).
  kInt,            // int dim (prod.int_out, any.out, cumsum).
  kOptionalInt,    // int? dim: None means every dim (argmax, argmin).
};

/// Where an overload keeps its arguments (positions in `args`).
struct Form {
  DimsKind dims;
  size_t dims_arg;     // Unused for kAll.
  size_t keepdim_arg;  // kNoKeepdim: the overload has none (false).
  size_t out;
};
inline constexpr size_t kNoKeepdim = ~size_t{0};

/// Outputs reduced together when the reduced dims are not the trailing ones.
inline constexpr int64_t kColumns = 64;

/// Runs of merged dims, visited row-major: position i of a walk over runs
/// of sizes s_0..s_k is at offset sum(coord_r * stride_r) in self and
/// sum(coord_r * out_stride_r) in out.
struct Walk {
  size_t runs = 0;
  // Only the first `runs` are set (no zeroing per call).
  int64_t size[kMaxTensorDim];
  int64_t stride[kMaxTensorDim];      // In elements of self.
  int64_t out_stride[kMaxTensorDim];  // In elements of out; 0 for reduced dims.

  /// Calls fn(i, offset) for each position; no runs is one position at 0.
  template <typename Fn>
  void each(const Fn& fn) const {
    visit([&](int64_t i, int64_t offset, int64_t) { fn(i, offset); });
  }
  /// Calls fn(offset, out_offset) for each position.
  template <typename Fn>
  void each_with_out(const Fn& fn) const {
    visit([&](int64_t, int64_t offset, int64_t out_offset) { fn(offset, out_offset); });
  }

 private:
  template <typename Fn>
  void visit(const Fn& fn) const {
    if (runs <= 1) {
      const int64_t n = runs == 0 ? 1 : size[0];
      const int64_t step = runs == 0 ? 0 : stride[0];
      const int64_t out_step = runs == 0 ? 0 : out_stride[0];
      for (int64_t i = 0; i < n; ++i) fn(i, i * step, i * out_step);
      return;
    }
    int64_t count = 1;
    for (size_t r = 0; r < runs; ++r) count *= size[r];
    int64_t at[kMaxTensorDim] = {};
    int64_t offset = 0;
    int64_t out_offset = 0;
    for (int64_t i = 0; i < count; ++i) {
      fn(i, offset, out_offset);
      for (size_t r = runs; r-- > 0;) {
        offset += stride[r];
        out_offset += out_stride[r];
        if (++at[r] < size[r]) break;
        offset -= stride[r] * size[r];
        out_offset -= out_stride[r] * size[r];
        at[r] = 0;
      }
    }
  }
};

/// Self and out seen around the reduced dims: `rows` walks the reduced dims
/// (where, from an output's first input, its inputs are, in the
/// reference's order: row-major), `outer_walk` the kept dims but one, and
/// `inner` is the size of that one, a kept run with stride 1 in both self
/// and out (1 when there is none), so neighbouring outputs reduce
/// neighbouring columns. Size-1 dims are dropped and a dim merged into the
/// previous one when it is of the same kind and continues it in memory.
struct Blocks {
  int64_t outer = 1;    // Positions of outer_walk.
  int64_t reduced = 1;  // Elements reduced into each output.
  int64_t inner = 1;    // Neighbouring outputs with neighbouring inputs.
  Walk outer_walk;
  Walk rows;
};

/// The dims `form` names in `args` as a bit mask over self's dims, negative
/// dims wrapped; a 0-d self has no dims to mark. False when a dim is out of
/// range or repeated (the reference reports it).
inline bool reduced_mask(const Form& form, Span<EValue*> args, uint32_t* mask) {
  const size_t ndim = args[0]->to_tensor().dim();
  const uint32_t all = ndim == 0 ? 0u : static_cast<uint32_t>((uint64_t{1} << ndim) - 1);
  const EValue& dims = *args[form.dims_arg];
  auto mark = [&](int64_t dim) {
    const int64_t rank = ndim == 0 ? 1 : static_cast<int64_t>(ndim);
    if (dim < -rank || dim >= rank) return false;
    if (ndim == 0) return true;
    const uint32_t bit = 1u << (dim < 0 ? dim + rank : dim);
    if (*mask & bit) return false;
    *mask |= bit;
    return true;
  };
  *mask = 0;
  switch (form.dims) {
    case DimsKind::kAll: *mask = all; return true;
    case DimsKind::kInt: return mark(dims.to_int());
    case DimsKind::kOptionalInt:
      if (dims.is_none()) {
        *mask = all;
        return true;
      }
      return mark(dims.to_int());
    case DimsKind::kList:
    case DimsKind::kListEmptyNone: {
      if (dims.is_none()) {
        *mask = all;
        return true;
      }
      const Span<const int64_t> list = dims.to_int_list();
      if (list.empty() && form.dims == DimsKind::kList) {
        *mask = all;
        return true;
      }
      for (int64_t dim : list) {
        if (!mark(dim)) return false;
      }
      return true;
    }
  }
  return false;
}

/// Gives `out` the result shape (reduced dims size 1 with keepdim, else
/// dropped) when a dynamic dim changed it. False when out cannot take it.
inline bool fit_out(const Tensor& self, uint32_t mask, bool keepdim, const Tensor& out) {
  SizesType sizes[kMaxTensorDim];
  size_t n = 0;
  for (size_t d = 0; d < self.dim(); ++d) {
    if (!((mask >> d) & 1u)) {
      sizes[n++] = self.size(d);
    } else if (keepdim) {
      sizes[n++] = 1;
    }
  }
  bool same = out.dim() == n;
  for (size_t d = 0; same && d < n; ++d) same = out.size(d) == sizes[d];
  return same || resize_tensor({out, "out"}, {sizes, n}).ok();
}

/// Splits `self` and its result `out` (already sized) around the dims in
/// `mask` (any set of dims), through their strides (any dim order).
inline void split(const Tensor& self, const Tensor& out, uint32_t mask, bool keepdim,
                  Blocks* blocks) {
  blocks->outer = blocks->reduced = blocks->inner = 1;
  Walk& kept = blocks->outer_walk;
  kept.runs = blocks->rows.runs = 0;
  size_t out_dim = 0;
  bool have_previous = false;
  bool previous_reduced = false;
  for (size_t d = 0; d < self.dim(); ++d) {
    const bool reduced = (mask >> d) & 1u;
    const size_t at_out = out_dim;
    if (!reduced || keepdim) ++out_dim;
    const int64_t size = self.size(d);
    if (size == 1) continue;
    const int64_t stride = self.strides()[d];
    const int64_t out_stride = reduced ? 0 : out.strides()[at_out];
    Walk& walk = reduced ? blocks->rows : kept;
    if (reduced) blocks->reduced *= size;
    const size_t last = walk.runs - 1;
    if (have_previous && previous_reduced == reduced && walk.stride[last] == stride * size &&
        walk.out_stride[last] == out_stride * size) {
      walk.size[last] *= size;
    } else {
      walk.size[walk.runs++] = size;
    }
    walk.stride[walk.runs - 1] = stride;
    walk.out_stride[walk.runs - 1] = out_stride;
    have_previous = true;
    previous_reduced = reduced;
  }
  for (size_t r = kept.runs; r-- > 0;) {
    if (kept.stride[r] != 1 || kept.out_stride[r] != 1) continue;
    blocks->inner = kept.size[r];
    for (size_t k = r + 1; k < kept.runs; ++k) {
      kept.size[k - 1] = kept.size[k];
      kept.stride[k - 1] = kept.stride[k];
      kept.out_stride[k - 1] = kept.out_stride[k];
    }
    --kept.runs;
    break;
  }
  for (size_t r = 0; r < kept.runs; ++r) blocks->outer *= kept.size[r];
}

/// Everything an eval needs from `args` before it computes.
template <typename IN, typename OUT>
struct Located {
  Blocks blocks;
  const IN* in = nullptr;
  OUT* out = nullptr;
};

/// Reads the dims, splits self, resizes out when a dynamic dim changed it
/// and sets the return value. False (nothing done) when the reference must
/// take the call.
template <typename IN, typename OUT>
bool locate(const Form& form, Span<EValue*> args, Located<IN, OUT>* at) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[form.out]->to_tensor();
  uint32_t mask = 0;
  if (!reduced_mask(form, args, &mask)) return false;
  const bool keepdim = form.keepdim_arg != kNoKeepdim && args[form.keepdim_arg]->to_bool();
  if (!fit_out(self, mask, keepdim, out)) return false;
  split(self, out, mask, keepdim, &at->blocks);
  at->in = static_cast<const IN*>(self.const_data_ptr());
  at->out = static_cast<OUT*>(out.mutable_data_ptr());
  if (self.numel() > 0 && at->in == nullptr) return false;
  if (out.numel() > 0 && at->out == nullptr) return false;
  set_return(args, form.out + 1, *args[form.out]);
  return true;
}

/// Calls columns(first, rows, width, result) for every block of outputs:
/// `width` (<= kColumns) neighbouring outputs at `result`, output j
/// reducing first[offset + j] for each offset rows.each() visits.
template <typename IN, typename OUT, typename Columns>
void for_each_block(const Located<IN, OUT>& at, const Columns& columns) {
  const Blocks& b = at.blocks;
  b.outer_walk.each_with_out([&](int64_t offset, int64_t out_offset) {
    const IN* base = at.in + offset;
    OUT* result = at.out + out_offset;
    for (int64_t i = 0; i < b.inner; i += kColumns) {
      const int64_t width = b.inner - i < kColumns ? b.inner - i : kColumns;
      columns(base + i, b.rows, width, result + i);
    }
  });
}

/// The common fold: acc = op.start(), then op.step(acc, x, r) for each
/// reduced x in order (r counts them), then out = op.finish(acc, count).
template <typename Op, typename IN, typename OUT>
void fold(const Located<IN, OUT>& at, const Op& op) {
  using Acc = typename Op::Acc;
  const int64_t count = at.blocks.reduced;
  for_each_block(at, [&](const IN* first, const Walk& rows, int64_t width, OUT* result) {
    Acc acc[kColumns];
    for (int64_t j = 0; j < width; ++j) acc[j] = op.start();
    rows.each([&](int64_t r, int64_t offset) {
      const IN* row = first + offset;
      for (int64_t j = 0; j < width; ++j) op.step(acc[j], row[j], r);
    });
    for (int64_t j = 0; j < width; ++j) result[j] = op.finish(acc[j], count);
  });
}

/// The prepared eval of a fold: Op (default-constructed) over IN into OUT.
/// kNeedsElements: the op has no identity, so an empty reduction goes to
/// the reference, which rejects it.
template <const Form& kForm, typename Op, typename IN, typename OUT, KernelFunction reference,
          bool kNeedsElements = false>
void fold_eval(KernelContext& ctx, Span<EValue*> args) {
  Located<IN, OUT> at;
  if (!locate(kForm, args, &at)) return reference(ctx, args);
  if (kNeedsElements && at.blocks.reduced == 0) return reference(ctx, args);
  fold(at, Op{});
}

/// Whether `t`'s strides are the ones its dim order gives (every tensor of a
/// program; not a view with strides of its own). An empty tensor's strides
/// are never used.
inline bool follows_dim_order(const Tensor& t) {
  if (t.numel() == 0) return true;
  int64_t expected = 1;
  for (size_t i = t.dim(); i-- > 0;) {
    const size_t d = t.dim_order()[i];
    if (d >= t.dim() || (t.size(d) != 1 && t.strides()[d] != expected)) return false;
    expected *= t.size(d);
  }
  return true;
}

/// Whether the prepared loops take self's and out's layouts: any dim order
/// (contiguous, channels-last, permuted).
inline bool loops_take_layouts(Span<EValue*> args, const Form& form) {
  return follows_dim_order(args[0]->to_tensor()) &&
         follows_dim_order(args[form.out]->to_tensor());
}

/// Calls fn(TypeTag<T>{}) when `type` is float32, float64, int32 or int64.
template <typename Fn>
void visit_loop_dtype(ScalarType type, Fn&& fn) {
  switch (type) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); break;
    case ScalarType::kDouble: fn(TypeTag<double>{}); break;
    case ScalarType::kInt: fn(TypeTag<int32_t>{}); break;
    case ScalarType::kLong: fn(TypeTag<int64_t>{}); break;
    default: break;
  }
}

/// As visit_loop_dtype, floating types only.
template <typename Fn>
void visit_loop_float(ScalarType type, Fn&& fn) {
  switch (type) {
    case ScalarType::kFloat: fn(TypeTag<float>{}); break;
    case ScalarType::kDouble: fn(TypeTag<double>{}); break;
    default: break;
  }
}

/// How install_fold pairs self's and out's dtypes.
enum class OutTypes : uint8_t {
  kAny,       // Any loop dtype (a conversion to out's dtype comes first).
  kFloating,  // float32 or float64.
  kSame,      // Self's (the op checked out has it).
};

/// Calls fn(TypeTag<T>{}) when `type` is float16 or bfloat16.
template <typename Fn>
void visit_reduced_float(ScalarType type, Fn&& fn) {
  switch (type) {
    case ScalarType::kHalf: fn(TypeTag<Half>{}); break;
    case ScalarType::kBFloat16: fn(TypeTag<BFloat16>{}); break;
    default: break;
  }
}

/// Installs fold_eval<..., Op<IN, OUT>, ...> when the loops take self's and
/// out's layouts and self's and out's dtypes loop dtypes paired as
/// kOutTypes says. kReducedFloats: also a float16 or bfloat16 self into an
/// out of its own dtype or float32 (the Op must then do the reference's
/// conversions, as sum and mean do: their reference accumulates these in
/// double like every floating type).
template <const Form& kForm, template <typename, typename> class Op, KernelFunction reference,
          OutTypes kOutTypes = OutTypes::kAny, bool kNeedsElements = false,
          bool kReducedFloats = false>
void install_fold(Span<EValue*> args, PreparedCall* call) {
  if (!loops_take_layouts(args, kForm)) return;
  const ScalarType in_type = args[0]->to_tensor().scalar_type();
  const ScalarType out_type = args[kForm.out]->to_tensor().scalar_type();
  if constexpr (kReducedFloats) {
    visit_reduced_float(in_type, [&](auto in_tag) {
      using IN = typename decltype(in_tag)::type;
      if (out_type == in_type) {
        call->eval = &fold_eval<kForm, Op<IN, IN>, IN, IN, reference, kNeedsElements>;
      } else if (out_type == ScalarType::kFloat) {
        call->eval = &fold_eval<kForm, Op<IN, float>, IN, float, reference, kNeedsElements>;
      }
    });
  }
  visit_loop_dtype(in_type, [&](auto in_tag) {
    using IN = typename decltype(in_tag)::type;
    auto install = [&](auto out_tag) {
      using OUT = typename decltype(out_tag)::type;
      call->eval = &fold_eval<kForm, Op<IN, OUT>, IN, OUT, reference, kNeedsElements>;
    };
    if constexpr (kOutTypes == OutTypes::kFloating) {
      visit_loop_float(out_type, install);
    } else if constexpr (kOutTypes == OutTypes::kSame) {
      if (out_type == in_type) install(in_tag);
    } else {
      visit_loop_dtype(out_type, install);
    }
  });
}

}  // namespace torchlight::portable::dense_reduce

namespace torchlight::portable {

/// Errors: kInvalidType naming `t` when its dtype is not a real type (the
/// message of TL_SWITCH_REAL_TYPES).
inline Status check_real_dtype(const NamedTensor& t) {
  if (visit_real_type(t.tensor.scalar_type(), [](auto) {})) return Error::kOk;
  return unsupported_dtype(t.name, t.tensor.scalar_type(), kRealTypeNames);
}

}  // namespace torchlight::portable
