#include "kernels/portable/util/advanced_index.h"

#include <cstring>

#include "kernels/portable/util/index_broadcast.h"
#include "kernels/portable/util/overlap.h"
#include "runtime/core/result.h"
#include "runtime/platform/assert.h"

namespace torchlight::portable {

namespace {

bool is_mask_dtype(ScalarType type) {
  return type == ScalarType::kBool || type == ScalarType::kByte;
}

// Row-major position `pos` of a tensor's shape into coordinates.
void unravel(const Tensor& t, int64_t pos, int64_t* coord) {
  for (size_t d = t.dim(); d-- > 0;) {
    coord[d] = pos % t.size(d);
    pos /= t.size(d);
  }
}

bool mask_at(const Tensor& mask, const int64_t* coord) {
  int64_t offset = 0;
  for (size_t d = 0; d < mask.dim(); ++d) offset += coord[d] * mask.strides()[d];
  uint8_t byte;
  std::memcpy(&byte, mask.const_data_ptr<char>() + offset, 1);
  return byte != 0;
}

}  // namespace

Status check_index_entries(const Tensor& self, Span<const Tensor> indices,
                           const char* indices_name) {
  const size_t rank = self.dim();
  TL_CHECK_OR_RETURN(indices.size() <= rank, Error::kInvalidArgument,
                     "argument '%s' has %zu entries, more than the %zu dimensions of 'self'",
                     indices_name, indices.size(), rank);
  size_t dim = 0;
  bool any = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& t = indices[i];
    if (!t.defined()) {
      ++dim;
      continue;
    }
    any = true;
    const ScalarType type = t.scalar_type();
    if (is_mask_dtype(type)) {
      TL_CHECK_OR_RETURN(t.dim() > 0, Error::kInvalidArgument,
                         "argument '%s' has a 0-d mask at position %zu, which is not supported",
                         indices_name, i);
      TL_CHECK_OR_RETURN(dim + t.dim() <= rank, Error::kInvalidArgument,
                         "argument '%s' indexes %zu dimensions, more than the %zu of 'self'",
                         indices_name, dim + t.dim(), rank);
      dim += t.dim();
      continue;
    }
    TL_CHECK_OR_RETURN(type == ScalarType::kLong || type == ScalarType::kInt, Error::kInvalidType,
                       "argument '%s' has a %s tensor at position %zu; index tensors must be "
                       "int64, int32, bool or uint8",
                       indices_name, to_string(type), i);
    TL_CHECK_OR_RETURN(dim < rank, Error::kInvalidArgument,
                       "argument '%s' indexes more dimensions than the %zu of 'self'",
                       indices_name, rank);
    ++dim;
  }
  TL_CHECK_OR_RETURN(any, Error::kInvalidArgument,
                     "argument '%s' has no index tensor (every entry is None)", indices_name);
  return Error::kOk;
}

Status AdvancedIndex::init(const Tensor& self, Span<const Tensor> indices,
                           const char* indices_name) {
  self_ = self;
  name_ = indices_name;
  num_entries_ = 0;
  const size_t rank = self.dim();
  TL_CHECK_OR_RETURN(indices.size() <= rank, Error::kInvalidArgument,
                     "argument '%s' has %zu entries, more than the %zu dimensions of 'self'",
                     name_, indices.size(), rank);
  size_t dim = 0;
  size_t first_pos = indices.size();
  size_t last_pos = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& t = indices[i];
    if (!t.defined()) {
      ++dim;
      continue;
    }
    const ScalarType type = t.scalar_type();
    Entry& entry = entries_[num_entries_];
    entry = Entry();
    entry.tensor = t;
    entry.first_dim = dim;
    TL_CHECK_OR_RETURN(t.numel() == 0 || t.const_data_ptr() != nullptr, Error::kInvalidArgument,
                       "argument '%s' has a tensor without data at position %zu", name_, i);
    if (is_mask_dtype(type)) {
      TL_CHECK_OR_RETURN(t.dim() > 0, Error::kInvalidArgument,
                         "argument '%s' has a 0-d mask at position %zu, which is not supported",
                         name_, i);
      TL_CHECK_OR_RETURN(dim + t.dim() <= rank, Error::kInvalidArgument,
                         "argument '%s' indexes %zu dimensions, more than the %zu of 'self'", name_,
                         dim + t.dim(), rank);
      for (size_t k = 0; k < t.dim(); ++k) {
        if (t.size(k) != self.size(dim + k)) {
          char mask_text[128];
          char self_text[128];
          return Status::error(Error::kInvalidArgument,
                               "argument '%s' has a mask of shape %s at position %zu that does "
                               "not match the shape %s of 'self' at dimension %zu",
                               name_, format_sizes(t.sizes(), mask_text, sizeof(mask_text)), i,
                               format_sizes(self.sizes(), self_text, sizeof(self_text)), dim);
        }
      }
      entry.is_mask = true;
      entry.num_dims = t.dim();
      int64_t coord[kMaxTensorDim] = {};
      for (int64_t pos = 0; pos < t.numel(); ++pos) {
        unravel(t, pos, coord);
        if (mask_at(t, coord)) ++entry.mask_count;
      }
    } else {
      TL_CHECK_OR_RETURN(type == ScalarType::kLong || type == ScalarType::kInt, Error::kInvalidType,
                         "argument '%s' has a %s tensor at position %zu; index tensors must be "
                         "int64, int32, bool or uint8",
                         name_, to_string(type), i);
      TL_CHECK_OR_RETURN(dim < rank, Error::kInvalidArgument,
                         "argument '%s' indexes more dimensions than the %zu of 'self'", name_,
                         rank);
    }
    dim += entry.num_dims;
    ++num_entries_;
    if (first_pos == indices.size()) first_pos = i;
    last_pos = i;
  }
  TL_CHECK_OR_RETURN(num_entries_ > 0, Error::kInvalidArgument,
                     "argument '%s' has no index tensor (every entry is None)", name_);
  bool adjacent = true;
  for (size_t i = first_pos; i <= last_pos; ++i) adjacent = adjacent && indices[i].defined();

  // B: the broadcast of the index shapes (a mask as [its true count]).
  broadcast_ = ShapeBuffer();
  for (size_t e = 0; e < num_entries_; ++e) {
    const Entry& entry = entries_[e];
    const size_t n = entry.is_mask ? 1 : entry.tensor.dim();
    auto size_at = [&](size_t k) -> int64_t {
      return entry.is_mask ? entry.mask_count : entry.tensor.size(k);
    };
    index_broadcast::BroadcastFailure failure;
    const bool broadcasts = index_broadcast::broadcast_into(&broadcast_, n, size_at, &failure);
    TL_CHECK_OR_RETURN(broadcasts || failure.too_large, Error::kInvalidArgument,
                       "argument '%s' has index tensors that do not broadcast together: size "
                       "%lld against %lld",
                       name_, static_cast<long long>(failure.size),
                       static_cast<long long>(failure.have));
    TL_CHECK_OR_RETURN(broadcasts, Error::kInvalidArgument,
                       "argument '%s' selects too many elements", name_);
  }

  // The result: B placed among the dimensions that were not indexed.
  bool indexed[kMaxTensorDim] = {};
  for (size_t e = 0; e < num_entries_; ++e) {
    for (size_t k = 0; k < entries_[e].num_dims; ++k) indexed[entries_[e].first_dim + k] = true;
  }
  size_t plain = 0;
  for (size_t d = 0; d < rank; ++d) plain += indexed[d] ? 0 : 1;
  TL_CHECK_OR_RETURN(plain + broadcast_.dim <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument '%s' gives a result of %zu dimensions, more than %zu", name_,
                     plain + broadcast_.dim, kMaxTensorDim);
  broadcast_at_ = adjacent ? entries_[0].first_dim : 0;
  shape_ = ShapeBuffer();
  size_t r = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (r == broadcast_at_) {
      for (size_t k = 0; k < broadcast_.dim; ++k) shape_.sizes[r++] = broadcast_.sizes[k];
    }
    if (indexed[d]) continue;
    result_to_self_[r] = d;
    shape_.sizes[r++] = self.size(d);
  }
  if (r == broadcast_at_) {  // B at the very end.
    for (size_t k = 0; k < broadcast_.dim; ++k) shape_.sizes[r++] = broadcast_.sizes[k];
  }
  shape_.dim = r;
  return Error::kOk;
}

bool AdvancedIndex::seek_mask(Entry& entry, int64_t rank, int64_t* coord) {
  if (rank < entry.cursor_rank) {
    entry.cursor_rank = -1;
    entry.cursor_pos = -1;
  }
  const int64_t numel = entry.tensor.numel();
  while (entry.cursor_rank < rank) {
    if (++entry.cursor_pos >= numel) return false;
    unravel(entry.tensor, entry.cursor_pos, coord);
    if (mask_at(entry.tensor, coord)) ++entry.cursor_rank;
  }
  unravel(entry.tensor, entry.cursor_pos, coord);
  return true;
}

Status AdvancedIndex::check_no_overlap_with(const NamedTensor& out) const {
  for (size_t e = 0; e < num_entries_; ++e) {
    TL_RETURN_IF_ERROR(check_no_overlap(out, NamedTensor{entries_[e].tensor, name_}));
  }
  return Error::kOk;
}

Status AdvancedIndex::target_offset(const int64_t* coord, Span<const StridesType> target_strides,
                                    int64_t* offset) {
  int64_t at = 0;
  for (size_t r = 0; r < shape_.dim; ++r) {
    if (r >= broadcast_at_ && r < broadcast_at_ + broadcast_.dim) continue;
    at += coord[r] * target_strides[result_to_self_[r]];
  }
  const int64_t* b = coord + broadcast_at_;
  for (size_t e = 0; e < num_entries_; ++e) {
    Entry& entry = entries_[e];
    if (entry.is_mask) {
      // Its [count] shape is aligned with B's last dimension.
      const int64_t rank = entry.mask_count == 1 ? 0 : b[broadcast_.dim - 1];
      int64_t mask_coord[kMaxTensorDim];
      TL_CHECK_OR_RETURN(seek_mask(entry, rank, mask_coord), Error::kInvalidArgument,
                         "a mask in argument '%s' lost true elements while indexing", name_);
      for (size_t k = 0; k < entry.num_dims; ++k) {
        at += mask_coord[k] * target_strides[entry.first_dim + k];
      }
      continue;
    }
    const Tensor& t = entry.tensor;
    const size_t n = t.dim();
    int64_t index_at = 0;
    for (size_t k = 0; k < n; ++k) {
      if (t.size(k) != 1) index_at += b[broadcast_.dim - n + k] * t.strides()[k];
    }
    int64_t value = 0;
    TL_RETURN_IF_ERROR(check_index_value(load_index(t, index_at), self_.size(entry.first_dim),
                                         entry.first_dim, /*allow_negative=*/true, name_, &value));
    at += value * target_strides[entry.first_dim];
  }
  *offset = at;
  return Error::kOk;
}

}  // namespace torchlight::portable
