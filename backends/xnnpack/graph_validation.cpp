#include "backends/xnnpack/graph_validation.h"

#include <cstring>
#include <memory>
#include <new>

#include "backends/xnnpack/value_view.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 64;
constexpr flatbuffers::uoffset_t kMaxVerifierTables = 1u << 24;

// Marks `index` in `seen`; false when it was already marked.
bool mark_once(uint8_t* seen, uint32_t index) {
  if (seen[index] != 0) return false;
  seen[index] = 1;
  return true;
}

}  // namespace

Result<const fb_xnnpack::XNNGraph*> verify_graph(Span<const uint8_t> flatbuffer) {
  TL_CHECK_OR_RETURN(flatbuffer.size() >= 8, Error::kInvalidProgram,
                     "XNNPACK flatbuffer is %zu bytes; at least 8 are needed", flatbuffer.size());
  const char* identifier = reinterpret_cast<const char*>(flatbuffer.data()) + 4;
  TL_CHECK_OR_RETURN(std::memcmp(identifier, "XN00", 4) == 0 || std::memcmp(identifier, "XN01", 4) == 0,
                     Error::kDelegateInvalidCompatibility,
                     "XNNPACK flatbuffer identifier is '%.4s'; expected XN00 or XN01", identifier);
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxVerifierDepth;
  options.max_tables = kMaxVerifierTables;
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size(), options);
  TL_CHECK_OR_RETURN(verifier.VerifyBuffer<fb_xnnpack::XNNGraph>(nullptr), Error::kInvalidProgram,
                     "XNNPACK flatbuffer (%zu bytes) fails verification: an offset or size "
                     "points outside it",
                     flatbuffer.size());
  const fb_xnnpack::XNNGraph* graph = fb_xnnpack::GetXNNGraph(flatbuffer.data());

  const auto* values = graph->xvalues();
  const uint32_t num_values = values == nullptr ? 0 : values->size();
  const uint32_t num_nodes = graph->xnodes() == nullptr ? 0 : graph->xnodes()->size();
  const uint32_t num_externs = graph->num_externs();
  TL_CHECK_OR_RETURN(num_values <= kMaxValues && num_nodes <= kMaxNodes, Error::kInvalidProgram,
                     "XNNPACK graph has %u values and %u nodes; the limits are %u and %u",
                     num_values, num_nodes, kMaxValues, kMaxNodes);
  TL_CHECK_OR_RETURN(num_externs <= kMaxExterns, Error::kInvalidProgram,
                     "XNNPACK graph declares %u external values; the limit is %u", num_externs,
                     kMaxExterns);

  std::unique_ptr<uint8_t[]> seen_id(new (std::nothrow) uint8_t[num_values + 1]());
  std::unique_ptr<uint8_t[]> seen_external(new (std::nothrow) uint8_t[num_externs + 1]());
  TL_CHECK_OR_RETURN(seen_id != nullptr && seen_external != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory checking %u XNNPACK values", num_values);
  for (uint32_t i = 0; i < num_values; ++i) {
    TL_ASSIGN_OR_RETURN(ValueView value, view_value(values->Get(i), i));
    const fb_xnnpack::XNNTensorValue* t = value.tensor;
    TL_CHECK_OR_RETURN(t->id_out() < num_values && mark_once(seen_id.get(), t->id_out()),
                       Error::kInvalidProgram,
                       "XNNPACK value %u has id %u; ids must be unique and below the value count "
                       "%u",
                       i, t->id_out(), num_values);
    const uint32_t flags = t->flags();
    TL_CHECK_OR_RETURN(flags == 0 || flags == kExternalInput || flags == kExternalOutput,
                       Error::kInvalidProgram,
                       "XNNPACK value %u has flags 0x%x; expected 0, 1 (input) or 2 (output)", i,
                       flags);
    if (flags != 0) {
      TL_CHECK_OR_RETURN(t->external_id() < num_externs &&
                             mark_once(seen_external.get(), t->external_id()),
                         Error::kInvalidProgram,
                         "XNNPACK value %u has external id %u; external ids must be unique and "
                         "below num_externs %u",
                         i, t->external_id(), num_externs);
      TL_CHECK_OR_RETURN(t->constant_buffer_idx() == 0, Error::kInvalidProgram,
                         "XNNPACK value %u is both external and constant", i);
    }
  }
  return graph;
}

}  // namespace xnnpack
}  // namespace torchlight
