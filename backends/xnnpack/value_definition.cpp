#include "backends/xnnpack/value_definition.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/xnnpack/value_view.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

using fb_xnnpack::XNNDatatype;

// Largest value a payload may declare (16 GiB, beyond any real tensor):
// XNNPACK plans memory from declared shapes, so an absurd one would have it
// allocate absurdly or overflow its own size arithmetic.
constexpr uint64_t kMaxValueBytes = uint64_t{1} << 34;
constexpr uint64_t kMaxElements = kMaxValueBytes;
constexpr uint64_t kMaxDim = (uint64_t{1} << 31) - 1;  // Fits a tensor's int32 sizes.

bool is_4bit(xnn_datatype t) { return t == xnn_datatype_qcint4 || t == xnn_datatype_qbint4; }

size_t element_bytes(xnn_datatype t) {
  switch (t) {
    case xnn_datatype_fp32:
    case xnn_datatype_qint32:
    case xnn_datatype_qcint32:
    case xnn_datatype_int32:
      return 4;
    case xnn_datatype_fp16:
    case xnn_datatype_bf16:
      return 2;
    default:
      return 1;
  }
}

struct Shape {
  size_t dims[XNN_MAX_TENSOR_DIMS] = {};
  size_t rank = 0;
  uint64_t numel = 1;
};

Result<Shape> read_shape(const fb_xnnpack::XNNTensorValue* t, uint32_t index) {
  Shape shape;
  const auto* dims = t->dims();
  const uint32_t rank = dims == nullptr ? 0 : dims->size();
  TL_CHECK_OR_RETURN(rank <= XNN_MAX_TENSOR_DIMS, Error::kInvalidProgram,
                     "XNNPACK value %u has %u dims; at most %d are supported", index, rank,
                     XNN_MAX_TENSOR_DIMS);
  TL_CHECK_OR_RETURN(t->num_dims() == rank, Error::kInvalidProgram,
                     "XNNPACK value %u says num_dims %u but lists %u dims", index, t->num_dims(),
                     rank);
  shape.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) {
    shape.dims[d] = dims->Get(d);
    TL_CHECK_OR_RETURN(shape.dims[d] <= kMaxDim, Error::kInvalidProgram,
                       "XNNPACK value %u has size %zu in dim %u; the limit is %llu", index,
                       shape.dims[d], d, static_cast<unsigned long long>(kMaxDim));
    shape.numel *= shape.dims[d];
    if (shape.numel > kMaxElements) shape.numel = kMaxElements + 1;  // Saturate.
  }
  return shape;
}

// Bytes a constant of this shape occupies: 4-bit values pack two per byte
// along the last dim, each row padded to a whole byte.
uint64_t constant_bytes(xnn_datatype t, const Shape& shape) {
  if (is_4bit(t) && shape.rank > 0) {
    const uint64_t last = shape.dims[shape.rank - 1];
    if (last == 0) return 0;
    return shape.numel / last * ((last + 1) / 2);
  }
  return shape.numel * element_bytes(t);
}

// The bytes of constant_data[index] (or the legacy constant_buffer[index]),
// checked to hold at least `needed` bytes.
Result<const uint8_t*> constant_bytes_at(const DefinitionContext& ctx, uint32_t index,
                                         uint64_t needed, uint32_t value, const char* what) {
  if (ctx.sections.legacy) {
    const auto* buffers = ctx.graph->constant_buffer();
    TL_CHECK_OR_RETURN(buffers != nullptr && index < buffers->size(), Error::kInvalidProgram,
                       "XNNPACK value %u: %s uses constant buffer %u; the payload has %u",
                       value, what, index, buffers == nullptr ? 0u : buffers->size());
    const auto* storage = buffers->Get(index)->storage();
    const uint64_t have = storage == nullptr ? 0 : storage->size();
    TL_CHECK_OR_RETURN(have >= needed && storage != nullptr, Error::kInvalidProgram,
                       "XNNPACK value %u: %s constant buffer %u holds %llu bytes; %llu are needed",
                       value, what, index, static_cast<unsigned long long>(have),
                       static_cast<unsigned long long>(needed));
    return storage->data();
  }
  const auto* offsets = ctx.graph->constant_data();
  TL_CHECK_OR_RETURN(offsets != nullptr && index < offsets->size(), Error::kInvalidProgram,
                     "XNNPACK value %u: %s uses constant %u; the payload lists %u", value, what,
                     index, offsets == nullptr ? 0u : offsets->size());
  const fb_xnnpack::ConstantDataOffset* entry = offsets->Get(index);
  if (entry->named_key() != nullptr) {
    const Span<const uint8_t> named =
        ctx.named == nullptr ? Span<const uint8_t>() : ctx.named->bytes(index);
    TL_CHECK_OR_RETURN(named.size() >= needed && named.data() != nullptr, Error::kInvalidProgram,
                       "XNNPACK value %u: %s constant %u is named data '%s' of %zu bytes; its "
                       "shape needs %llu",
                       value, what, index, entry->named_key()->c_str(), named.size(),
                       static_cast<unsigned long long>(needed));
    return named.data();
  }
  const uint64_t region = ctx.sections.constants.size();
  const uint64_t offset = entry->offset();
  const uint64_t size = entry->size();
  TL_CHECK_OR_RETURN(offset <= region && size <= region - offset, Error::kInvalidProgram,
                     "XNNPACK value %u: %s constant %u is [%llu, +%llu), outside the %llu-byte "
                     "constant region",
                     value, what, index, static_cast<unsigned long long>(offset),
                     static_cast<unsigned long long>(size), static_cast<unsigned long long>(region));
  TL_CHECK_OR_RETURN(size >= needed, Error::kInvalidProgram,
                     "XNNPACK value %u: %s constant %u holds %llu bytes; its shape needs %llu",
                     value, what, index, static_cast<unsigned long long>(size),
                     static_cast<unsigned long long>(needed));
  return ctx.sections.constants.data() + offset;
}

bool valid_scale(float s) { return std::isfinite(s) && s > 0.0f; }

Status check_scales(const float* scales, uint64_t count, uint32_t value) {
  for (uint64_t i = 0; i < count; ++i) {
    float s;
    std::memcpy(&s, scales + i, sizeof(s));
    TL_CHECK_OR_RETURN(valid_scale(s), Error::kInvalidProgram,
                       "XNNPACK value %u: scale %llu is %g; scales must be finite and positive",
                       value, static_cast<unsigned long long>(i), static_cast<double>(s));
  }
  return Error::kOk;
}

// fp32 -> bf16 as upstream's 0.5 runtime converts blockwise scales.
uint16_t to_bf16(float f) {
  const float nudged = f * 1.00389105f;
  uint32_t bits;
  std::memcpy(&bits, &nudged, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

struct Definition {
  uint32_t index;  // Position in xvalues, for messages.
  const fb_xnnpack::XNNTensorValue* tensor;
  xnn_datatype datatype;
  Shape shape;
  const void* data;  // Null unless constant.
  uint32_t external_id;
  uint32_t flags;
};

Result<uint32_t> define_plain(const DefinitionContext& ctx, const Definition& d) {
  TL_CHECK_OR_RETURN(d.datatype == xnn_datatype_fp32 || d.datatype == xnn_datatype_fp16 ||
                         d.datatype == xnn_datatype_int32 || d.datatype == xnn_datatype_bf16,
                     Error::kInvalidProgram,
                     "XNNPACK value %u has datatype %d, which needs quantization parameters",
                     d.index, static_cast<int>(d.tensor->datatype()));
  uint32_t id = 0;
  const xnn_status s = xnn_define_tensor_value(ctx.subgraph, d.datatype, d.shape.rank, d.shape.dims,
                                               d.data, d.external_id, d.flags, &id);
  if (s != xnn_status_success) return xnn_error(s, "value", d.index);
  return id;
}

Result<uint32_t> define_per_tensor(const DefinitionContext& ctx, const Definition& d,
                                   const fb_xnnpack::PerTensorQuant* q) {
  const int32_t zp = q->zero_point();
  bool zp_ok = false;
  switch (d.datatype) {
    case xnn_datatype_qint8: zp_ok = zp >= -128 && zp <= 127; break;
    case xnn_datatype_quint8: zp_ok = zp >= 0 && zp <= 255; break;
    case xnn_datatype_qint32: zp_ok = zp == 0; break;
    default:
      return Status::error(Error::kInvalidProgram,
                           "XNNPACK value %u: per-tensor quantization on datatype %d; expected "
                           "qint8, quint8 or qint32",
                           d.index, static_cast<int>(d.tensor->datatype()));
  }
  TL_CHECK_OR_RETURN(zp_ok, Error::kInvalidProgram,
                     "XNNPACK value %u: zero point %d is out of range for its datatype", d.index,
                     zp);
  TL_CHECK_OR_RETURN(valid_scale(q->scale()), Error::kInvalidProgram,
                     "XNNPACK value %u: scale %g must be finite and positive", d.index,
                     static_cast<double>(q->scale()));
  uint32_t id = 0;
  const xnn_status s =
      xnn_define_quantized_tensor_value(ctx.subgraph, d.datatype, zp, q->scale(), d.shape.rank,
                                        d.shape.dims, d.data, d.external_id, d.flags, &id);
  if (s != xnn_status_success) return xnn_error(s, "value", d.index);
  return id;
}

Result<uint32_t> define_per_channel(const DefinitionContext& ctx, const Definition& d,
                                    const fb_xnnpack::PerChannelQuant* q) {
  TL_CHECK_OR_RETURN(d.datatype == xnn_datatype_qcint8 || d.datatype == xnn_datatype_qcint32 ||
                         d.datatype == xnn_datatype_qcint4,
                     Error::kInvalidProgram,
                     "XNNPACK value %u: per-channel quantization on datatype %d; expected qcint8, "
                     "qcint32 or qcint4",
                     d.index, static_cast<int>(d.tensor->datatype()));
  const int32_t channel_dim = q->channel_dim();
  TL_CHECK_OR_RETURN(channel_dim >= 0 && static_cast<size_t>(channel_dim) < d.shape.rank,
                     Error::kInvalidProgram,
                     "XNNPACK value %u: channel_dim %d is outside its %zu dims", d.index,
                     channel_dim, d.shape.rank);
  const uint64_t channels = d.shape.dims[channel_dim];
  const float* scales = nullptr;
  uint64_t count = 0;
  if (q->scale_buffer_idx() != 0) {
    count = q->num_scales();
    TL_ASSIGN_OR_RETURN(const uint8_t* bytes,
                        constant_bytes_at(ctx, q->scale_buffer_idx(), count * 4, d.index, "scale"));
    TL_CHECK_OR_RETURN(reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0,
                       Error::kInvalidProgram, "XNNPACK value %u: scales are not 4-byte aligned",
                       d.index);
    scales = reinterpret_cast<const float*>(bytes);
  } else if (q->scale() != nullptr) {
    count = q->scale()->size();
    scales = q->scale()->data();
  }
  TL_CHECK_OR_RETURN(count == channels && scales != nullptr, Error::kInvalidProgram,
                     "XNNPACK value %u: %llu per-channel scales for %llu channels (dim %d)",
                     d.index, static_cast<unsigned long long>(count),
                     static_cast<unsigned long long>(channels), channel_dim);
  TL_RETURN_IF_ERROR(check_scales(scales, count, d.index));
  const int32_t zp = d.datatype == xnn_datatype_qcint4 ? 8 : 0;
  uint32_t id = 0;
  const xnn_status s = xnn_define_channelwise_quantized_tensor_value_v2(
      ctx.subgraph, d.datatype, zp, scales, d.shape.rank, static_cast<size_t>(channel_dim),
      d.shape.dims, d.data, d.external_id, d.flags, &id);
  if (s != xnn_status_success) return xnn_error(s, "value", d.index);
  return id;
}

Result<uint32_t> define_blockwise(const DefinitionContext& ctx, const Definition& d,
                                  const fb_xnnpack::PerChannelGroupQuant* q) {
  TL_CHECK_OR_RETURN(d.datatype == xnn_datatype_qbint4, Error::kInvalidProgram,
                     "XNNPACK value %u: blockwise quantization on datatype %d; expected qbint4",
                     d.index, static_cast<int>(d.tensor->datatype()));
  TL_CHECK_OR_RETURN(d.shape.rank == 2 && q->channel_dim() == 0, Error::kInvalidProgram,
                     "XNNPACK value %u: blockwise weights must be 2-d [out, in] with channel_dim "
                     "0 (got %zu dims, channel_dim %d)",
                     d.index, d.shape.rank, q->channel_dim());
  const int32_t group = q->group_size();
  const uint64_t in = d.shape.dims[1];
  TL_CHECK_OR_RETURN(group > 0 && in % static_cast<uint64_t>(group) == 0, Error::kInvalidProgram,
                     "XNNPACK value %u: group size %d does not divide the %llu input channels",
                     d.index, group, static_cast<unsigned long long>(in));
  const uint64_t expected = d.shape.dims[0] * (in / static_cast<uint64_t>(group));
  const uint16_t* bf16 = nullptr;
  uint64_t count = 0;
  if (q->scale_buffer_idx() != 0) {
    count = q->num_scales();
    TL_ASSIGN_OR_RETURN(const uint8_t* bytes,
                        constant_bytes_at(ctx, q->scale_buffer_idx(), count * 2, d.index, "scale"));
    TL_CHECK_OR_RETURN(reinterpret_cast<uintptr_t>(bytes) % alignof(uint16_t) == 0,
                       Error::kInvalidProgram, "XNNPACK value %u: scales are not 2-byte aligned",
                       d.index);
    bf16 = reinterpret_cast<const uint16_t*>(bytes);
  } else if (q->scale_bf16() != nullptr && q->scale_bf16()->size() != 0) {
    count = q->scale_bf16()->size();
    bf16 = q->scale_bf16()->data();
  } else if (q->scale() != nullptr) {
    count = q->scale()->size();
    if (count == expected) {
      TL_RETURN_IF_ERROR(check_scales(q->scale()->data(), count, d.index));
      // XNNPACK reads the scales when it packs the weights; keep them for
      // the delegate's life all the same.
      uint16_t* converted = ctx.allocator->allocate_array<uint16_t>(static_cast<size_t>(count));
      TL_CHECK_OR_RETURN(converted != nullptr, Error::kDelegateMemoryAllocationFailed,
                         "XNNPACK value %u: no memory for %llu bf16 scales", d.index,
                         static_cast<unsigned long long>(count));
      for (uint64_t i = 0; i < count; ++i) converted[i] = to_bf16(q->scale()->Get(i));
      bf16 = converted;
    }
  }
  TL_CHECK_OR_RETURN(count == expected && bf16 != nullptr, Error::kInvalidProgram,
                     "XNNPACK value %u: %llu blockwise scales; [%zu, %llu] with groups of %d "
                     "needs %llu",
                     d.index, static_cast<unsigned long long>(count), d.shape.dims[0],
                     static_cast<unsigned long long>(in), group,
                     static_cast<unsigned long long>(expected));
  uint32_t id = 0;
  const xnn_status s = xnn_define_blockwise_quantized_tensor_value(
      ctx.subgraph, d.datatype, 8, bf16, d.shape.rank, 0, static_cast<size_t>(group), d.shape.dims,
      d.data, d.external_id, d.flags, &id);
  if (s != xnn_status_success) return xnn_error(s, "value", d.index);
  if (ctx.blockwise != nullptr) {
    ctx.blockwise[d.tensor->id_out()] = {bf16, static_cast<uint32_t>(group)};
  }
  return id;
}

Result<uint32_t> define_dynamic(const DefinitionContext& ctx, const Definition& d,
                                const fb_xnnpack::PerTokenDynamicQuant* q) {
  TL_CHECK_OR_RETURN(d.datatype == xnn_datatype_qdint8 && d.data == nullptr,
                     Error::kInvalidProgram,
                     "XNNPACK value %u: dynamic quantization needs a non-constant qdint8 value",
                     d.index);
  const int32_t nonbatch = q->num_nonbatch_dims();
  TL_CHECK_OR_RETURN(nonbatch >= 1 && static_cast<size_t>(nonbatch) <= d.shape.rank,
                     Error::kInvalidProgram,
                     "XNNPACK value %u: num_nonbatch_dims %d is not in [1, %zu]", d.index, nonbatch,
                     d.shape.rank);
  uint32_t id = 0;
  const xnn_status s = xnn_define_dynamically_quantized_tensor_value(
      ctx.subgraph, d.datatype, d.shape.rank, static_cast<size_t>(nonbatch), d.shape.dims,
      d.external_id, d.flags, &id);
  if (s != xnn_status_success) return xnn_error(s, "value", d.index);
  if (ctx.nonbatch_dims != nullptr) {
    ctx.nonbatch_dims[d.tensor->id_out()] = static_cast<uint8_t>(nonbatch);
  }
  return id;
}

Result<uint32_t> define_one(const DefinitionContext& ctx, const ValueView& view, Definition& d) {
  if (view.quantized == nullptr) return define_plain(ctx, d);
  switch (view.quantized->quant_params_type()) {
    case fb_xnnpack::XNNQuantParams::PerTensorQuant:
      return define_per_tensor(ctx, d, view.quantized->quant_params_as_PerTensorQuant());
    case fb_xnnpack::XNNQuantParams::PerChannelQuant:
      return define_per_channel(ctx, d, view.quantized->quant_params_as_PerChannelQuant());
    case fb_xnnpack::XNNQuantParams::PerChannelGroupQuant:
      return define_blockwise(ctx, d, view.quantized->quant_params_as_PerChannelGroupQuant());
    case fb_xnnpack::XNNQuantParams::PerTokenDynamicQuant:
      return define_dynamic(ctx, d, view.quantized->quant_params_as_PerTokenDynamicQuant());
    default:
      return Status::error(Error::kInvalidProgram,
                           "XNNPACK value %u is quantized with unknown parameters kind %u",
                           d.index, static_cast<unsigned>(view.quantized->quant_params_type()));
  }
}

// The salt of a constant for the weights cache (packed_weights_cache.h), or
// false when its packed form depends on data outside the value (scales in
// the constant region), so it is never shared.
bool constant_salt(const ValueView& view, const Definition& d, const uint64_t key[2],
                   uint64_t* salt) {
  uint64_t h = siphash24(&d.datatype, sizeof(d.datatype), key);
  h = h * 31 + siphash24(d.shape.dims, d.shape.rank * sizeof(size_t), key);
  if (view.quantized == nullptr) {
    *salt = h;
    return true;
  }
  const auto floats = [&](const flatbuffers::Vector<float>* v) {
    return v == nullptr ? 0 : siphash24(v->data(), v->size() * sizeof(float), key);
  };
  switch (view.quantized->quant_params_type()) {
    case fb_xnnpack::XNNQuantParams::PerTensorQuant: {
      const auto* q = view.quantized->quant_params_as_PerTensorQuant();
      const struct { float scale; int32_t zero_point; } p{q->scale(), q->zero_point()};
      h = h * 31 + siphash24(&p, sizeof(p), key);
      break;
    }
    case fb_xnnpack::XNNQuantParams::PerChannelQuant: {
      const auto* q = view.quantized->quant_params_as_PerChannelQuant();
      if (q->scale_buffer_idx() != 0) return false;
      h = (h * 31 + floats(q->scale())) * 31 + static_cast<uint32_t>(q->channel_dim());
      break;
    }
    case fb_xnnpack::XNNQuantParams::PerChannelGroupQuant: {
      const auto* q = view.quantized->quant_params_as_PerChannelGroupQuant();
      if (q->scale_buffer_idx() != 0) return false;
      const auto* bf16 = q->scale_bf16();
      h = (h * 31 + floats(q->scale())) * 31 +
          (bf16 == nullptr ? 0 : siphash24(bf16->data(), bf16->size() * 2, key));
      h = (h * 31 + static_cast<uint32_t>(q->channel_dim())) * 31 +
          static_cast<uint32_t>(q->group_size());
      break;
    }
    default:
      return false;
  }
  *salt = h;
  return true;
}

}  // namespace

xnn_datatype to_xnn_datatype(int16_t payload_datatype) {
  switch (static_cast<XNNDatatype>(payload_datatype)) {
    case XNNDatatype::xnn_datatype_fp32: return xnn_datatype_fp32;
    case XNNDatatype::xnn_datatype_fp16: return xnn_datatype_fp16;
    case XNNDatatype::xnn_datatype_qint8: return xnn_datatype_qint8;
    case XNNDatatype::xnn_datatype_quint8: return xnn_datatype_quint8;
    case XNNDatatype::xnn_datatype_qint32: return xnn_datatype_qint32;
    case XNNDatatype::xnn_datatype_qcint8: return xnn_datatype_qcint8;
    case XNNDatatype::xnn_datatype_qcint32: return xnn_datatype_qcint32;
    case XNNDatatype::xnn_datatype_qcint4: return xnn_datatype_qcint4;
    case XNNDatatype::xnn_datatype_qdint8: return xnn_datatype_qdint8;
    case XNNDatatype::xnn_datatype_qbint4: return xnn_datatype_qbint4;
    case XNNDatatype::xnn_datatype_int32: return xnn_datatype_int32;
    case XNNDatatype::xnn_datatype_bf16: return xnn_datatype_bf16;
    default: return xnn_datatype_invalid;  // qpint8 and pfp32 are never serialized.
  }
}

Status define_values(DefinitionContext& ctx, ExternalValue* externals, uint32_t* num_externals) {
  const auto* values = ctx.graph->xvalues();
  *num_externals = 0;
  uint64_t activation_bytes = 0;  // Non-constant values; each is <= kMaxValueBytes.
  for (uint32_t i = 0; i < ctx.num_values; ++i) {
    TL_ASSIGN_OR_RETURN(ValueView view, view_value(values->Get(i), i));
    const uint32_t id_out = view.tensor->id_out();
    if (ctx.value_flags != nullptr && ctx.value_flags[id_out] == kNotInStage) continue;
    Definition d{};
    d.index = i;
    d.tensor = view.tensor;
    d.datatype = to_xnn_datatype(static_cast<int16_t>(view.tensor->datatype()));
    TL_CHECK_OR_RETURN(d.datatype != xnn_datatype_invalid, Error::kInvalidProgram,
                       "XNNPACK value %u has unknown datatype %d", i,
                       static_cast<int>(view.tensor->datatype()));
    TL_CHECK_OR_RETURN(view.tensor->dq_datatype() == XNNDatatype::xnn_datatype_invalid,
                       Error::kNotSupported,
                       "XNNPACK value %u uses the legacy dq_datatype field, which is not supported",
                       i);
    TL_ASSIGN_OR_RETURN(d.shape, read_shape(view.tensor, i));
    TL_CHECK_OR_RETURN(d.shape.numel * element_bytes(d.datatype) <= kMaxValueBytes,
                       Error::kInvalidProgram,
                       "XNNPACK value %u declares more than %llu bytes", i,
                       static_cast<unsigned long long>(kMaxValueBytes));
    if (view.tensor->constant_buffer_idx() != 0) {
      TL_ASSIGN_OR_RETURN(const uint8_t* data,
                          constant_bytes_at(ctx, view.tensor->constant_buffer_idx(),
                                            constant_bytes(d.datatype, d.shape), i, "data"));
      // Our stages read constants as their element type, as XNNPACK's
      // packing does; upstream's serializer aligns them (16 bytes).
      const size_t align = element_bytes(d.datatype);
      TL_CHECK_OR_RETURN(reinterpret_cast<uintptr_t>(data) % align == 0, Error::kInvalidProgram,
                         "XNNPACK value %u: constant %u's data is not %zu-byte aligned", i,
                         view.tensor->constant_buffer_idx(), align);
      d.data = data;
    } else {
      activation_bytes += d.shape.numel * element_bytes(d.datatype);
      TL_CHECK_OR_RETURN(activation_bytes <= ctx.max_value_bytes, Error::kInvalidProgram,
                         "XNNPACK values 0..%u declare %llu bytes of tensors besides "
                         "constants; the limit is %llu",
                         i, static_cast<unsigned long long>(activation_bytes),
                         static_cast<unsigned long long>(ctx.max_value_bytes));
    }
    // Verified: flags is 0, INPUT or OUTPUT, and external ids are unique.
    d.flags = view.tensor->flags();
    d.external_id = d.flags != 0 ? view.tensor->external_id() : XNN_INVALID_VALUE_ID;
    if (ctx.value_flags != nullptr) {
      d.flags = ctx.value_flags[id_out];
      d.external_id = d.flags != 0 ? ctx.external_ids[id_out] : XNN_INVALID_VALUE_ID;
    }
    TL_ASSIGN_OR_RETURN(uint32_t id, define_one(ctx, view, d));
    uint64_t salt = 0;
    if (d.data != nullptr && ctx.constants != nullptr && ctx.hash_key != nullptr &&
        constant_salt(view, d, ctx.hash_key, &salt)) {
      ctx.constants[ctx.num_constants++] = {d.data, constant_bytes(d.datatype, d.shape), salt};
    }
    if (ctx.constant_data != nullptr) ctx.constant_data[id_out] = d.data;
    if (ctx.payload_external_ids != nullptr) ctx.payload_external_ids[id_out] = d.external_id;
    ctx.id_map[view.tensor->id_out()] = id;
    ctx.datatypes[view.tensor->id_out()] = d.datatype;
    ctx.kinds[view.tensor->id_out()] = d.data != nullptr              ? ValueKind::kConstant
                                       : d.flags == kExternalInput  ? ValueKind::kExternalInput
                                       : d.flags == kExternalOutput ? ValueKind::kExternalOutput
                                                                    : ValueKind::kInternal;
    DeclaredShape& declared = ctx.shapes[view.tensor->id_out()];
    declared.rank = static_cast<uint32_t>(d.shape.rank);
    for (size_t k = 0; k < d.shape.rank; ++k) declared.dims[k] = d.shape.dims[k];
    if (d.flags != 0 && externals != nullptr) {
      ExternalValue& e = externals[(*num_externals)++];
      e = {d.external_id, d.datatype, d.flags == kExternalInput,
           static_cast<uint32_t>(d.shape.rank), {}, kNoShape, {}, view.tensor->id_out()};
      for (size_t k = 0; k < d.shape.rank; ++k) e.dims[k] = d.shape.dims[k];
    }
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
