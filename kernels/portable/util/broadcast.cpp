#include "kernels/portable/util/broadcast.h"

#include "runtime/core/result.h"

namespace torchlight::portable {

namespace {

// Size of `sizes` at result dimension `d` of a rank-`dim` result, 1 where the
// shape has no such dimension (it is aligned at the last dimension).
SizesType aligned_size(Span<const SizesType> sizes, size_t dim, size_t d) {
  const size_t lead = dim - sizes.size();
  return d < lead ? 1 : sizes[d - lead];
}

}  // namespace

Status compute_broadcast_shape(Span<const NamedTensor> inputs, BroadcastShape* out) {
  size_t dim = 0;
  for (const NamedTensor& input : inputs) {
    if (input.tensor.dim() > dim) dim = input.tensor.dim();
  }
  TL_CHECK_OR_RETURN(dim <= kMaxTensorDim, Error::kInvalidArgument,
                     "broadcast rank %zu exceeds the maximum %zu", dim, kMaxTensorDim);
  out->dim = dim;
  // Which input decided each result size, for the error message.
  size_t decided_by[kMaxTensorDim] = {};
  for (size_t d = 0; d < dim; ++d) out->sizes[d] = 1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Span<const SizesType> sizes = inputs[i].tensor.sizes();
    for (size_t d = 0; d < dim; ++d) {
      const SizesType size = aligned_size(sizes, dim, d);
      if (size == out->sizes[d] || size == 1) continue;
      if (out->sizes[d] == 1) {
        out->sizes[d] = size;
        decided_by[d] = i;
        continue;
      }
      const NamedTensor& first = inputs[decided_by[d]];
      char first_shape[128];
      char second_shape[128];
      return Status::error(
          Error::kInvalidArgument,
          "shapes %s ('%s') and %s ('%s') do not broadcast: size %d vs %d at dimension %zu of "
          "the result",
          format_sizes(first.tensor.sizes(), first_shape, sizeof(first_shape)), first.name,
          format_sizes(sizes, second_shape, sizeof(second_shape)), inputs[i].name,
          static_cast<int>(out->sizes[d]), static_cast<int>(size), d);
    }
  }
  return Error::kOk;
}

Status compute_broadcast_shape(const NamedTensor& a, const NamedTensor& b, BroadcastShape* out) {
  const NamedTensor inputs[] = {a, b};
  return compute_broadcast_shape(Span<const NamedTensor>(inputs), out);
}

bool broadcasts_to(Span<const SizesType> from, Span<const SizesType> to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  }
  return true;
}

Status BroadcastIndexer::init(Span<const SizesType> shape, Span<const NamedTensor> operands) {
  TL_CHECK_OR_RETURN(operands.size() <= kMaxOperands, Error::kInvalidArgument,
                     "%zu operands exceed the indexer's maximum of %zu", operands.size(),
                     kMaxOperands);
  TL_CHECK_OR_RETURN(shape.size() <= kMaxTensorDim, Error::kInvalidArgument,
                     "rank %zu exceeds the maximum %zu", shape.size(), kMaxTensorDim);
  num_operands_ = operands.size();
  for (size_t op = 0; op < num_operands_; ++op) {
    const Tensor& t = operands[op].tensor;
    if (!broadcasts_to(t.sizes(), shape)) {
      char from[128];
      char to[128];
      return Status::error(Error::kInvalidArgument,
                           "argument '%s' with shape %s does not broadcast to shape %s",
                           operands[op].name, format_sizes(t.sizes(), from, sizeof(from)),
                           format_sizes(shape, to, sizeof(to)));
    }
  }

  numel_ = 1;
  for (SizesType s : shape) numel_ *= s;
  dims_ = 0;
  if (numel_ == 0) return Error::kOk;

  // Copy dimensions outermost first, dropping size-1 dimensions (their
  // index is always 0) and merging a dimension into the previous one when
  // every operand steps over it contiguously.
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t size = shape[d];
    if (size == 1) continue;
    int64_t strides[kMaxOperands] = {};
    for (size_t op = 0; op < num_operands_; ++op) {
      const Tensor& t = operands[op].tensor;
      const size_t lead = shape.size() - t.dim();
      if (d >= lead && t.size(d - lead) != 1) strides[op] = t.strides()[d - lead];
    }
    bool merge = dims_ > 0;
    for (size_t op = 0; merge && op < num_operands_; ++op) {
      merge = strides_[op][dims_ - 1] == strides[op] * size;
    }
    if (merge) {
      sizes_[dims_ - 1] *= size;
      for (size_t op = 0; op < num_operands_; ++op) strides_[op][dims_ - 1] = strides[op];
    } else {
      sizes_[dims_] = size;
      for (size_t op = 0; op < num_operands_; ++op) strides_[op][dims_] = strides[op];
      ++dims_;
    }
  }
  return Error::kOk;
}

void BroadcastIndexer::offsets_at(int64_t index, int64_t* offsets) const {
  for (size_t op = 0; op < num_operands_; ++op) offsets[op] = 0;
  for (size_t d = dims_; d-- > 0;) {
    const int64_t i = index % sizes_[d];
    index /= sizes_[d];
    for (size_t op = 0; op < num_operands_; ++op) offsets[op] += i * strides_[op][d];
  }
}

}  // namespace torchlight::portable
