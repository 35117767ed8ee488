#include "extension/llm/runner/module_decoder_step.h"

#include <algorithm>
#include <cinttypes>
#include <utility>

#include "runtime/core/half.h"

namespace torchlight {
namespace {

// Kept short: a Status holds 384 characters and cuts the context (the
// file's path) before the root cause, so a long root would cost the path.
constexpr const char* kSignature =
    "forward(tokens [1, T] int64, input_pos [T] or [1] int64, none without a KV cache) -> "
    "logits [1, T, vocab], [1, 1, vocab] or [1, vocab], float32, float16 or bfloat16";

bool is_logits_dtype(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

// Widens one row of 16-bit float logits into `out`.
template <typename T>
void widen(const void* row, float* out, int32_t count) {
  const T* in = static_cast<const T*>(row);
  for (int32_t i = 0; i < count; ++i) out[i] = static_cast<float>(in[i]);
}

// Checks that value `index` of forward (an input or output, per `what`) is
// a tensor of `dtype` (for kFloat: any dtype is_logits_dtype accepts) and of
// `rank` (or `other_rank`, when not 0), and returns its info.
Result<TensorInfo> expect_tensor(const Result<Tag>& tag, const Result<TensorInfo>& info,
                                 const char* what, ScalarType dtype, size_t rank,
                                 size_t other_rank = 0) {
  if (!tag.ok()) return tag.status();
  TL_CHECK_OR_RETURN(tag.get() == Tag::kTensor, Error::kInvalidProgram,
                     "forward's %s is %s, not a tensor; an LLM program has the signature %s", what,
                     to_string(tag.get()), kSignature);
  if (!info.ok()) return info.status();
  const TensorInfo& t = info.get();
  if (other_rank != 0 && t.sizes.size() == other_rank) rank = other_rank;
  // Logits of another float type (float64) would be a valid LLM this runner
  // cannot read; anything else is not the LLM signature.
  const bool dtype_ok = t.dtype == dtype || (dtype == ScalarType::kFloat && is_logits_dtype(t.dtype));
  const bool other_float_logits = dtype == ScalarType::kFloat && !dtype_ok &&
                                  t.sizes.size() == rank && is_floating_point(t.dtype);
  TL_CHECK_OR_RETURN(dtype_ok && t.sizes.size() == rank,
                     other_float_logits ? Error::kNotSupported : Error::kInvalidProgram,
                     "forward's %s is %s with %zu dims, expected %s with %zu; an LLM program has "
                     "the signature %s",
                     what, to_string(t.dtype), t.sizes.size(), to_string(dtype), rank, kSignature);
  TensorInfo copy = t;
  return copy;
}

}  // namespace

ModuleDecoderStep::ModuleDecoderStep(Method* method, Layout layout, OwnedTensor tokens,
                                     OwnedTensor positions, int64_t max_seq_len,
                                     int64_t max_tokens_per_step, int32_t vocab_size,
                                     bool last_only, ScalarType logits_dtype)
    : method_(method),
      layout_(layout),
      tokens_(std::move(tokens)),
      positions_(std::move(positions)),
      max_seq_len_(max_seq_len),
      max_tokens_per_step_(max_tokens_per_step),
      vocab_size_(vocab_size),
      last_only_(last_only),
      logits_dtype_(logits_dtype),
      // float32 logits are read in place; others are widened into this row.
      widened_(logits_dtype == ScalarType::kFloat ? 0 : static_cast<size_t>(vocab_size)) {}

Result<std::unique_ptr<ModuleDecoderStep>> ModuleDecoderStep::create(Module* module,
                                                                     const LlmMetadata& metadata) {
  TL_CHECK_OR_RETURN(module != nullptr, Error::kInvalidArgument,
                     "ModuleDecoderStep: null module");
  TL_ASSIGN_OR_RETURN(std::vector<std::string> names, module->ordered_method_names());
  if (std::find(names.begin(), names.end(), kMethodName) == names.end()) {
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return Status::error(Error::kNotFound,
                         "the program has no method 'forward' (it has: %s); an LLM program has "
                         "the signature %s",
                         list.empty() ? "none" : list.c_str(), kSignature);
  }
  TL_ASSIGN_OR_RETURN(Method * method, module->method(kMethodName));
  const MethodMeta meta = method->method_meta();
  TL_CHECK_OR_RETURN((meta.num_inputs() == 1 || meta.num_inputs() == 2) &&
                         meta.num_outputs() == 1,
                     Error::kInvalidProgram,
                     "forward takes %zu inputs and returns %zu outputs; an LLM program has the "
                     "signature %s",
                     meta.num_inputs(), meta.num_outputs(), kSignature);
  const bool has_cache = meta.num_inputs() == 2;
  TL_CHECK_OR_RETURN(!metadata.use_kv_cache.has_value() || *metadata.use_kv_cache == has_cache,
                     Error::kInvalidProgram,
                     "%s() says %s, but forward takes %zu inputs; a program with a KV cache "
                     "takes (tokens, input_pos), one without (tokens)",
                     LlmMetadata::kUseKvCache, has_cache ? "false" : "true", meta.num_inputs());
  TL_ASSIGN_OR_RETURN(TensorInfo tokens, expect_tensor(meta.input_tag(0), meta.input_tensor_info(0),
                                                       "input 0 (tokens)", ScalarType::kLong, 2));
  Layout layout = Layout::kNoCache;
  if (has_cache) {
    TL_ASSIGN_OR_RETURN(TensorInfo positions,
                        expect_tensor(meta.input_tag(1), meta.input_tensor_info(1),
                                      "input 1 (input_pos)", ScalarType::kLong, 1));
    // Upstream's start position is a static [1]; ours has T entries, dynamic
    // with the tokens (for T = 1 both read the same).
    const bool start_only = positions.dynamism == TensorShapeDynamism::kStatic &&
                            positions.sizes[0] == 1;
    layout = start_only ? Layout::kStartPosition : Layout::kPositions;
    TL_CHECK_OR_RETURN(start_only || tokens.sizes[1] == positions.sizes[0],
                       Error::kInvalidProgram,
                       "forward's tokens hold %d positions but input_pos %d; input_pos has "
                       "length T (every position) or is [1] (the start position)",
                       tokens.sizes[1], positions.sizes[0]);
  }
  TL_ASSIGN_OR_RETURN(TensorInfo logits, expect_tensor(meta.output_tag(0),
                                                       meta.output_tensor_info(0),
                                                       "output 0 (logits)", ScalarType::kFloat, 3, 2));
  TL_CHECK_OR_RETURN(tokens.sizes[0] == 1 && logits.sizes[0] == 1, Error::kInvalidProgram,
                     "forward's batch size is %d (tokens) and %d (logits); the runner feeds one "
                     "sequence, batch 1",
                     tokens.sizes[0], logits.sizes[0]);
  TL_CHECK_OR_RETURN(is_contiguous_dim_order(logits.dim_order), Error::kNotSupported,
                     "forward's logits are not laid out contiguously; the runner reads them in "
                     "[1, T, vocab] order");
  // [1, vocab] and [1, 1, vocab]: the program computes the last position's
  // logits only (prefill needs no others), as upstream's exporter does by default.
  const bool last_only = logits.sizes.size() == 2 ||
                         (logits.sizes[1] == 1 && logits.dynamism == TensorShapeDynamism::kStatic);

  // T per call: fixed for a static input (only T = 1 can decode), up to the
  // bound for a bounded one; an unbounded one takes the whole context.
  const bool unbounded = tokens.dynamism == TensorShapeDynamism::kDynamicUnbound;
  int64_t max_tokens = tokens.sizes[1];
  TL_CHECK_OR_RETURN(tokens.dynamism != TensorShapeDynamism::kStatic || max_tokens == 1,
                     Error::kNotSupported,
                     "forward's tokens input is static [1, %d]: every call must feed exactly %d "
                     "tokens, so it cannot decode one token at a time; export with a dynamic "
                     "length (1 <= T <= max_seq_len) or T = 1",
                     tokens.sizes[1], tokens.sizes[1]);
  TL_CHECK_OR_RETURN(unbounded || max_tokens >= 1, Error::kInvalidProgram,
                     "forward's tokens input holds %" PRId64 " tokens; it needs at least 1",
                     max_tokens);

  int64_t max_seq_len = 0;
  if (metadata.max_context_len.has_value()) {
    // Upstream: the cache holds max_context_len positions, a call takes at
    // most max_seq_len tokens.
    max_seq_len = *metadata.max_context_len;
    if (metadata.max_seq_len.has_value()) max_tokens = std::min(max_tokens, *metadata.max_seq_len);
  } else if (metadata.max_seq_len.has_value()) {
    max_seq_len = *metadata.max_seq_len;
  } else {
    TL_CHECK_OR_RETURN(!unbounded && tokens.dynamism == TensorShapeDynamism::kDynamicBound,
                       Error::kInvalidProgram,
                       "cannot tell the context length: the program has no %s() method and "
                       "forward's tokens input is %s [1, %d]; re-export with "
                       "torchlight.llm.metadata.llm_metadata_methods",
                       LlmMetadata::kMaxSeqLen, unbounded ? "unbounded" : "static",
                       tokens.sizes[1]);
    max_seq_len = max_tokens;
  }
  if (unbounded || max_tokens > max_seq_len) max_tokens = max_seq_len;
  // Without a cache every call re-feeds the sequence: it must take all of it.
  TL_CHECK_OR_RETURN(layout != Layout::kNoCache || max_tokens >= max_seq_len,
                     Error::kNotSupported,
                     "forward has no KV cache (no input_pos), so every call feeds the whole "
                     "sequence, but its tokens input holds %" PRId64 " of the %" PRId64
                     " positions; export with 1 <= T <= max_seq_len",
                     max_tokens, max_seq_len);
  // The token buffers below, and the generator's, hold max_tokens and
  // max_seq_len entries.
  TL_CHECK_OR_RETURN(max_seq_len <= kMaxLlmContext, Error::kNotSupported,
                     "forward's context is %" PRId64 " tokens; this runner supports at most "
                     "%" PRId64,
                     max_seq_len, kMaxLlmContext);

  const int64_t vocab = logits.sizes[logits.sizes.size() - 1];
  TL_CHECK_OR_RETURN(vocab >= 1 && vocab <= kMaxLlmContext, Error::kInvalidProgram,
                     "forward's logits have a vocabulary of %" PRId64 "; expected 1 to %" PRId64,
                     vocab, kMaxLlmContext);
  TL_CHECK_OR_RETURN(!metadata.vocab_size.has_value() || *metadata.vocab_size == vocab,
                     Error::kInvalidProgram,
                     "%s() says the vocabulary has %" PRId64 " tokens, but forward's logits "
                     "have %" PRId64,
                     LlmMetadata::kVocabSize, metadata.vocab_size.value_or(0), vocab);

  const auto dynamism = tokens.dynamism == TensorShapeDynamism::kStatic
                            ? TensorShapeDynamism::kStatic
                            : TensorShapeDynamism::kDynamicBound;
  const auto t = static_cast<SizesType>(max_tokens);
  TL_ASSIGN_OR_RETURN(OwnedTensor token_tensor,
                      OwnedTensor::make(ScalarType::kLong, {1, t}, dynamism));
  const bool start_only = layout != Layout::kPositions;
  TL_ASSIGN_OR_RETURN(OwnedTensor position_tensor,
                      OwnedTensor::make(ScalarType::kLong, {start_only ? SizesType{1} : t},
                                        start_only ? TensorShapeDynamism::kStatic : dynamism));
  return std::unique_ptr<ModuleDecoderStep>(new ModuleDecoderStep(
      method, layout, std::move(token_tensor), std::move(position_tensor), max_seq_len,
      max_tokens, static_cast<int32_t>(vocab), last_only, logits.dtype));
}

Result<Span<const float>> ModuleDecoderStep::run(Span<const int64_t> tokens, int64_t start_pos) {
  const auto n = static_cast<int64_t>(tokens.size());
  TL_CHECK_OR_RETURN(n >= 1 && n <= max_tokens_per_step_, Error::kInvalidArgument,
                     "a decoder step takes 1 to %" PRId64 " tokens, got %" PRId64,
                     max_tokens_per_step_, n);
  TL_CHECK_OR_RETURN(start_pos >= 0 && start_pos + n <= max_seq_len_, Error::kInvalidArgument,
                     "positions %" PRId64 "..%" PRId64 " are outside the context of %" PRId64,
                     start_pos, start_pos + n - 1, max_seq_len_);
  // Without a cache the call feeds the sequence from position 0: what was
  // fed before start_pos (kept in tokens_), then `tokens`.
  const bool refeed = layout_ == Layout::kNoCache;
  TL_CHECK_OR_RETURN(!refeed || start_pos <= fed_, Error::kInvalidArgument,
                     "the program has no KV cache, so positions before %" PRId64
                     " must have been fed by earlier calls, but only %" PRId64 " were",
                     start_pos, fed_);
  const int64_t first = refeed ? start_pos : 0;  // Where `tokens` go in tokens_.
  const int64_t fed = refeed ? start_pos + n : n;
  const SizesType token_sizes[] = {1, static_cast<SizesType>(fed)};
  TL_RETURN_IF_ERROR(tokens_.resize(token_sizes));
  int64_t* token_data = tokens_.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) token_data[first + i] = tokens[static_cast<size_t>(i)];
  TL_RETURN_IF_ERROR(method_->set_input(0, tokens_.evalue()));
  if (layout_ == Layout::kPositions) {
    const SizesType position_sizes[] = {static_cast<SizesType>(n)};
    TL_RETURN_IF_ERROR(positions_.resize(position_sizes));
    int64_t* position_data = positions_.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) position_data[i] = start_pos + i;
  } else if (layout_ == Layout::kStartPosition) {
    positions_.data<int64_t>()[0] = start_pos;
  }
  if (!refeed) TL_RETURN_IF_ERROR(method_->set_input(1, positions_.evalue()));
  fed_ = refeed ? fed : 0;
  TL_RETURN_IF_ERROR(method_->execute());
  TL_ASSIGN_OR_RETURN(const EValue* output, method_->output(0));
  TL_CHECK_OR_RETURN(output->is_tensor(), Error::kInvalidProgram,
                     "forward returned %s, not a logits tensor", to_string(output->tag()));
  const Tensor logits = output->to_tensor();
  const int64_t rows = last_only_ ? 1 : fed;
  const bool shape_ok = last_only_ ? logits.numel() == vocab_size_ && logits.size(0) == 1
                                   : logits.dim() == 3 && logits.size(0) == 1 &&
                                         logits.size(1) == rows && logits.size(2) == vocab_size_;
  TL_CHECK_OR_RETURN(logits.scalar_type() == logits_dtype_ && shape_ok,
                     Error::kInvalidProgram,
                     "forward returned logits of %s with %zu dims for %" PRId64
                     " tokens; expected %s [1, %" PRId64 ", %d]",
                     to_string(logits.scalar_type()), logits.dim(), fed, to_string(logits_dtype_),
                     rows, vocab_size_);
  const void* data = logits.const_data_ptr();
  TL_CHECK_OR_RETURN(data != nullptr, Error::kInvalidProgram, "forward's logits have no data");
  const size_t row = static_cast<size_t>(rows - 1) * static_cast<size_t>(vocab_size_);
  if (logits_dtype_ == ScalarType::kFloat) {
    return Span<const float>(static_cast<const float*>(data) + row,
                             static_cast<size_t>(vocab_size_));
  }
  if (logits_dtype_ == ScalarType::kHalf) {
    widen<Half>(static_cast<const Half*>(data) + row, widened_.data(), vocab_size_);
  } else {
    widen<BFloat16>(static_cast<const BFloat16*>(data) + row, widened_.data(), vocab_size_);
  }
  return Span<const float>(widened_.data(), widened_.size());
}

}  // namespace torchlight
