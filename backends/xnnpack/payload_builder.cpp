#include "backends/xnnpack/payload_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include <gtest/gtest.h>

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

constexpr size_t kAlign = 16;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

void put_le(std::vector<uint8_t>& out, size_t at, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

PayloadBuilder::PayloadBuilder() {
  graph.version = "0";
  // constant_data[0] is the dummy upstream always writes.
  graph.constant_data.push_back(std::make_unique<fb::ConstantDataOffsetT>());
  blobs_.emplace_back();
}

uint32_t PayloadBuilder::value(fb::XNNDatatype type, std::vector<uint32_t> dims, uint32_t flags,
                               uint32_t external_id, uint32_t constant) {
  auto tensor = std::make_unique<fb::XNNTensorValueT>();
  tensor->datatype = type;
  tensor->num_dims = static_cast<uint32_t>(dims.size());
  tensor->dims = std::move(dims);
  tensor->flags = flags;
  tensor->external_id = external_id;
  tensor->constant_buffer_idx = constant;
  tensor->id_out = static_cast<uint32_t>(graph.xvalues.size());
  auto value = std::make_unique<fb::XValueT>();
  value->xvalue_union.type = fb::XValueUnion::XNNTensorValue;
  value->xvalue_union.value = tensor.release();
  graph.xvalues.push_back(std::move(value));
  if (flags == 1) graph.input_ids.push_back(graph.xvalues.size() - 1);
  if (flags == 2) graph.output_ids.push_back(graph.xvalues.size() - 1);
  if (flags != 0 && external_id + 1 > graph.num_externs) graph.num_externs = external_id + 1;
  return static_cast<uint32_t>(graph.xvalues.size() - 1);
}

uint32_t PayloadBuilder::input(std::vector<uint32_t> dims, uint32_t external_id,
                               fb::XNNDatatype type) {
  return value(type, std::move(dims), 1, external_id);
}

uint32_t PayloadBuilder::output(std::vector<uint32_t> dims, uint32_t external_id,
                                fb::XNNDatatype type) {
  return value(type, std::move(dims), 2, external_id);
}

uint32_t PayloadBuilder::internal(std::vector<uint32_t> dims, fb::XNNDatatype type) {
  return value(type, std::move(dims));
}

uint32_t PayloadBuilder::constant_f32(std::vector<uint32_t> dims, const std::vector<float>& values) {
  const uint32_t idx = constant_bytes(values.data(), values.size() * sizeof(float));
  return value(fb::XNNDatatype::xnn_datatype_fp32, std::move(dims), 0, kNone, idx);
}

uint32_t PayloadBuilder::quantized(fb::XNNDatatype type, std::vector<uint32_t> dims,
                                   fb::XNNQuantParamsUnion quant, uint32_t flags,
                                   uint32_t external_id, uint32_t constant) {
  const uint32_t id = value(type, std::move(dims), flags, external_id, constant);
  auto& slot = graph.xvalues.back()->xvalue_union;
  auto q = std::make_unique<fb::XNNQuantizedTensorValueT>();
  q->tensor_value.reset(static_cast<fb::XNNTensorValueT*>(slot.value));
  slot.value = nullptr;
  slot.type = fb::XValueUnion::NONE;
  q->quant_params = std::move(quant);
  slot.type = fb::XValueUnion::XNNQuantizedTensorValue;
  slot.value = q.release();
  return id;
}

uint32_t PayloadBuilder::constant_bytes(const void* data, size_t size) {
  auto entry = std::make_unique<fb::ConstantDataOffsetT>();
  entry->offset = constants_.size();
  entry->size = size;
  const auto* p = static_cast<const uint8_t*>(data);
  constants_.insert(constants_.end(), p, p + size);
  constants_.resize(align_up(constants_.size()), 0);
  blobs_.emplace_back(p, p + size);
  graph.constant_data.push_back(std::move(entry));
  return static_cast<uint32_t>(graph.constant_data.size() - 1);
}

uint32_t PayloadBuilder::named_constant(const std::string& key, const void* data, size_t size) {
  auto entry = std::make_unique<fb::ConstantDataOffsetT>();
  entry->offset = UINT64_MAX;
  entry->size = size;
  entry->named_key = key;
  if (data != nullptr) {
    const auto* p = static_cast<const uint8_t*>(data);
    named_data[key].assign(p, p + size);
  }
  blobs_.emplace_back();
  graph.constant_data.push_back(std::move(entry));
  return static_cast<uint32_t>(graph.constant_data.size() - 1);
}

fb::XNNQuantParamsUnion per_tensor(float scale, int32_t zero_point) {
  fb::XNNQuantParamsUnion u;
  auto* q = new fb::PerTensorQuantT();
  q->scale = scale, q->zero_point = zero_point;
  u.type = fb::XNNQuantParams::PerTensorQuant;
  u.value = q;
  return u;
}

fb::XNNQuantParamsUnion per_channel(std::vector<float> scales) {
  fb::XNNQuantParamsUnion u;
  auto* q = new fb::PerChannelQuantT();
  q->scale = std::move(scales);
  q->channel_dim = 0;
  u.type = fb::XNNQuantParams::PerChannelQuant;
  u.value = q;
  return u;
}

fb::XNNQuantParamsUnion per_channel_in_constant(uint32_t scale_index, uint32_t count) {
  fb::XNNQuantParamsUnion u = per_channel({});
  auto* q = static_cast<fb::PerChannelQuantT*>(u.value);
  q->scale_buffer_idx = scale_index;
  q->num_scales = count;
  return u;
}

fb::XNNQuantParamsUnion per_token() {
  fb::XNNQuantParamsUnion u;
  auto* q = new fb::PerTokenDynamicQuantT();
  q->num_nonbatch_dims = 1;
  u.type = fb::XNNQuantParams::PerTokenDynamicQuant;
  u.value = q;
  return u;
}

Result<TensorLayout> NamedDataInMemory::get_tensor_layout(std::string_view key) const {
  return Status::error(Error::kNotSupported, "no tensor layout for '%.*s'",
                       static_cast<int>(key.size()), key.data());
}

Status NamedDataInMemory::load_data_into(std::string_view key, void* buffer, size_t size) const {
  const auto it = blobs_.find(std::string(key));
  if (it == blobs_.end()) return Status::error(Error::kNotFound, "no named data");
  if (size > it->second.size()) return Status::error(Error::kInvalidArgument, "too many bytes");
  if (size > 0) std::memcpy(buffer, it->second.data(), size);
  return Error::kOk;
}

Result<const char*> NamedDataInMemory::get_key(uint32_t index) const {
  if (index >= blobs_.size()) return Status::error(Error::kInvalidArgument, "index out of range");
  return std::next(blobs_.begin(), index)->first.c_str();
}

Result<FreeableBuffer> NamedDataInMemory::get_data(std::string_view key) const {
  ++loads;
  const auto it = blobs_.find(std::string(key));
  if (it == blobs_.end()) {
    return Status::error(Error::kNotFound, "no named data '%.*s'", static_cast<int>(key.size()),
                         key.data());
  }
  ++live;
  return FreeableBuffer(it->second.data(), it->second.size(),
                        [](void* self, void*, size_t) { --static_cast<const NamedDataInMemory*>(self)->live; },
                        const_cast<NamedDataInMemory*>(this));
}

void PayloadBuilder::add_node(fb::XNodeUnion kind, void* table) {
  auto node = std::make_unique<fb::XNodeT>();
  node->xnode_union.type = kind;
  node->xnode_union.value = table;
  node->debug_handle = static_cast<uint32_t>(graph.xnodes.size());
  graph.xnodes.push_back(std::move(node));
}

void PayloadBuilder::clamp_last(float min, float max) {
  auto range = std::make_unique<fb::OutputMinMaxT>();
  range->output_min = min;
  range->output_max = max;
  graph.xnodes.back()->output_min_max = std::move(range);
}

std::vector<uint8_t> PayloadBuilder::flatbuffer() const {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::XNNGraph::Pack(fbb, &graph), "XN01");
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> PayloadBuilder::build() const {
  const std::vector<uint8_t> fb = flatbuffer();
  const size_t fb_offset = 32;
  const size_t const_offset = fb_offset + align_up(fb.size());
  std::vector<uint8_t> out(const_offset + constants_.size(), 0);
  std::memcpy(&out[4], "XH00", 4);
  put_le(out, 8, 30, 2);
  put_le(out, 10, fb_offset, 4);
  put_le(out, 14, fb.size(), 4);
  put_le(out, 18, const_offset, 4);
  put_le(out, 22, constants_.size(), 8);
  std::memcpy(&out[fb_offset], fb.data(), fb.size());
  if (!constants_.empty()) std::memcpy(&out[const_offset], constants_.data(), constants_.size());
  return out;
}

std::vector<uint8_t> PayloadBuilder::build_legacy() const {
  fb::XNNGraphT copy(graph);
  copy.constant_data.clear();
  for (const auto& blob : blobs_) {
    auto buffer = std::make_unique<fb::BufferT>();
    buffer->storage = blob;
    copy.constant_buffer.push_back(std::move(buffer));
  }
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::XNNGraph::Pack(fbb, &copy), "XN00");
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

LoadedDelegate::LoadedDelegate(const std::vector<uint8_t>& payload, const XnnpackBackend& backend,
                               EventTracer* tracer, const NamedDataMap* named_data)
    : backend_(backend), tracer_(tracer) {
  FreeableBuffer processed(payload.data(), payload.size(), nullptr);
  BackendInitContext context;
  context.runtime_allocator = &allocator_;
  context.event_tracer = tracer;
  context.named_data_map = named_data;
  Result<DelegateHandle*> handle = backend_.init(context, &processed, {});
  if (handle.ok()) {
    handle_ = handle.get();
  } else {
    status_ = handle.status();
  }
}

LoadedDelegate::~LoadedDelegate() {
  if (handle_ != nullptr) backend_.destroy(handle_);
}

Status LoadedDelegate::execute(std::vector<EValue> args) {
  if (handle_ == nullptr) return status_;
  std::vector<EValue*> pointers;
  for (EValue& v : args) pointers.push_back(&v);
  BackendExecutionContext context;
  context.event_tracer = tracer_;
  return backend_.execute(context, handle_, {pointers.data(), pointers.size()});
}

OwnedTensor float_tensor(std::vector<SizesType> sizes, std::vector<float> values) {
  size_t n = 1;
  for (SizesType s : sizes) n *= static_cast<size_t>(s);
  if (values.empty()) values.assign(n, 0.0f);
  Result<OwnedTensor> t = OwnedTensor::from_values<float>(std::move(sizes), values);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t.get());
}

std::vector<float> values_of(const OwnedTensor& t) {
  const float* p = t.tensor().const_data_ptr<float>();
  return {p, p + t.tensor().numel()};
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 1;
  for (float& v : out) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return out;
}

void add_conv(PayloadBuilder& b, const Conv& c, uint32_t in, uint32_t out, uint32_t seed) {
  const uint32_t filter =
      b.constant_f32({c.oc, c.k, c.k, c.ic}, random_values(c.oc * c.k * c.k * c.ic, seed));
  const uint32_t bias = b.constant_f32({c.oc}, random_values(c.oc, seed + 1));
  auto* n = b.node<fb::_XNNNodeConvT>(fb::XNodeUnion::XNNConv2d);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = c.pad;
  n->kernel_height = n->kernel_width = c.k;
  n->subsampling_height = n->subsampling_width = c.stride;
  n->dilation_height = n->dilation_width = c.dilation;
  n->groups = 1;
  n->group_input_channels = c.ic;
  n->group_output_channels = c.oc;
  n->input1_id = in, n->filter_id = filter, n->bias_id = bias, n->output_id = out;
  if (c.relu) b.clamp_last(0.0f, INFINITY);
}

void add_relu6(PayloadBuilder& b, bool clamp_node, uint32_t* value, std::vector<uint32_t> dims) {
  if (!clamp_node) {
    b.clamp_last(0.0f, 6.0f);
    return;
  }
  const uint32_t clamped = b.internal(std::move(dims));
  auto* c = b.node<fb::_XNNNode1x1T>(fb::XNodeUnion::XNNClamp);
  c->input_id = *value, c->output_id = clamped;
  b.clamp_last(0.0f, 6.0f);
  *value = clamped;
}

uint32_t add_binary(PayloadBuilder& b, fb::XNodeUnion kind, uint32_t a, uint32_t c, uint32_t out) {
  auto* n = b.node<fb::_XNNNode2x1T>(kind);
  n->input1_id = a, n->input2_id = c, n->output_id = out;
  return out;
}

std::vector<Outputs> run_all(const std::vector<uint8_t>& payload,
                             const std::vector<std::vector<OwnedTensor*>>& input_sets,
                             const std::vector<std::vector<SizesType>>& out_bounds,
                             bool xnnpack_only, DelegateEventNames* events) {
  std::unique_ptr<XnnpackOnly> only;
  if (xnnpack_only) only = std::make_unique<XnnpackOnly>();
  LoadedDelegate d(payload, xnnpack_backend(), events);
  EXPECT_TRUE(d.status().ok()) << d.status().message();
  std::vector<Outputs> results;
  for (const auto& inputs : input_sets) {
    std::vector<OwnedTensor> outs;
    for (const auto& bound : out_bounds) {
      Result<OwnedTensor> t =
          OwnedTensor::make(ScalarType::kFloat, bound, TensorShapeDynamism::kDynamicBound);
      EXPECT_TRUE(t.ok());
      outs.push_back(std::move(t.get()));
    }
    std::vector<EValue> args;
    for (OwnedTensor* t : inputs) args.push_back(t->evalue());
    for (OwnedTensor& t : outs) args.push_back(t.evalue());
    Outputs r;
    r.status = d.execute(args);
    for (OwnedTensor& t : outs) {
      r.values.push_back(values_of(t));
      const Tensor& view = t.tensor();
      r.shapes.emplace_back(view.sizes().begin(), view.sizes().end());
    }
    results.push_back(std::move(r));
  }
  return results;
}

void expect_same_outputs(const std::vector<Outputs>& split, const std::vector<Outputs>& alone) {
  ASSERT_EQ(split.size(), alone.size());
  for (size_t call = 0; call < split.size(); ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    ASSERT_TRUE(split[call].status.ok()) << split[call].status.message();
    ASSERT_TRUE(alone[call].status.ok()) << alone[call].status.message();
    for (size_t o = 0; o < split[call].values.size(); ++o) {
      EXPECT_EQ(split[call].shapes[o], alone[call].shapes[o]) << "output " << o;
      const std::vector<float>& got = split[call].values[o];
      const std::vector<float>& want = alone[call].values[o];
      ASSERT_EQ(got.size(), want.size());
      float scale = 0.0f;
      for (float v : want) scale = std::max(scale, std::fabs(v));
      ASSERT_GT(scale, 0.0f) << "output " << o << " is all zeros: the check would be vacuous";
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-5f * scale) << "output " << o << " element " << i;
      }
    }
  }
}

}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
