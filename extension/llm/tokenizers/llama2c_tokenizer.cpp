#include "extension/llm/tokenizers/llama2c_tokenizer.h"

#include <cmath>
#include <cstring>

#include "extension/llm/tokenizers/file_contents.h"

namespace torchlight {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tokenizer.bin is little-endian; this reader assumes a little-endian host");

int32_t read_i32(const char* p) {
  int32_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

float read_f32(const char* p) {
  float v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

Result<std::unique_ptr<Llama2cTokenizer>> Llama2cTokenizer::load(
    const std::string& path, const Llama2cTokenizerOptions& options) {
  TL_ASSIGN_OR_RETURN(std::string contents, read_file_contents(path, kMaxTokenizerFileBytes));
  return load_from_contents(contents, path.c_str(), options);
}

Result<std::unique_ptr<Llama2cTokenizer>> Llama2cTokenizer::load_from_contents(
    std::string_view contents, const char* name, const Llama2cTokenizerOptions& options) {
  TL_CHECK_OR_RETURN(options.expected_vocab_size >= 0 &&
                         options.expected_vocab_size <= kMaxVocabSize,
                     Error::kInvalidArgument, "expected_vocab_size %d is outside [0, %d]",
                     options.expected_vocab_size, kMaxVocabSize);
  std::unique_ptr<Llama2cTokenizer> t(new Llama2cTokenizer());
  const char* data = contents.data();
  const size_t size = contents.size();
  TL_CHECK_OR_RETURN(size >= 4, Error::kInvalidExternalData,
                     "'%s' is %zu bytes; a llama2.c tokenizer starts with a 4-byte "
                     "max_token_length (truncated?)",
                     name, size);
  t->max_token_length_ = read_i32(data);
  TL_CHECK_OR_RETURN(t->max_token_length_ > 0 && t->max_token_length_ <= kMaxTokenLength,
                     Error::kInvalidExternalData,
                     "'%s': max_token_length is %d; expected 1..%d (not a llama2.c tokenizer?)",
                     name, t->max_token_length_, kMaxTokenLength);
  const int32_t limit = options.expected_vocab_size > 0 ? options.expected_vocab_size
                                                        : kMaxVocabSize;
  size_t offset = 4;
  int32_t count = 0;
  while (count < limit && offset < size) {
    TL_CHECK_OR_RETURN(size - offset >= 8, Error::kInvalidExternalData,
                       "'%s': token %d's score and length need 8 bytes at offset %zu, but only "
                       "%zu remain (truncated?)",
                       name, count, offset, size - offset);
    const float score = read_f32(data + offset);
    const int32_t len = read_i32(data + offset + 4);
    TL_CHECK_OR_RETURN(!std::isnan(score), Error::kInvalidExternalData,
                       "'%s': token %d at offset %zu has a NaN score", name, count, offset);
    TL_CHECK_OR_RETURN(len >= 0 && len <= t->max_token_length_, Error::kInvalidExternalData,
                       "'%s': token %d at offset %zu has length %d; expected 0..%d "
                       "(max_token_length)",
                       name, count, offset, len, t->max_token_length_);
    offset += 8;
    TL_CHECK_OR_RETURN(size - offset >= static_cast<size_t>(len), Error::kInvalidExternalData,
                       "'%s': token %d's %d bytes at offset %zu run past the end of the file "
                       "(%zu bytes; truncated?)",
                       name, count, len, offset, size);
    t->model_.add_piece(contents.substr(offset, static_cast<size_t>(len)), score, true);
    offset += static_cast<size_t>(len);
    ++count;
  }
  TL_CHECK_OR_RETURN(count > 0, Error::kInvalidExternalData, "'%s' has no tokens", name);
  if (options.expected_vocab_size > 0) {
    TL_CHECK_OR_RETURN(count == options.expected_vocab_size, Error::kInvalidExternalData,
                       "'%s' has %d tokens; the model's vocab_size is %d (truncated?)", name,
                       count, options.expected_vocab_size);
    TL_CHECK_OR_RETURN(offset == size, Error::kInvalidExternalData,
                       "'%s' has %zu bytes after its %d tokens; expected none (wrong vocab_size "
                       "or not a llama2.c tokenizer?)",
                       name, size - offset, count);
  } else {
    TL_CHECK_OR_RETURN(offset == size, Error::kInvalidExternalData,
                       "'%s' has more than %d tokens", name, kMaxVocabSize);
  }
  auto check_id = [&](int32_t id, const char* role) -> Status {
    TL_CHECK_OR_RETURN(id >= -1 && id < count, Error::kInvalidArgument,
                       "%s id %d is outside '%s''s %d tokens", role, id, name, count);
    return Error::kOk;
  };
  TL_RETURN_IF_ERROR(check_id(options.bos_id, "BOS"));
  TL_RETURN_IF_ERROR(check_id(options.eos_id, "EOS"));
  TL_RETURN_IF_ERROR(check_id(options.unk_id, "unknown-token"));
  t->bos_id_ = options.bos_id;
  t->eos_id_ = options.eos_id;
  t->add_dummy_prefix_ = options.add_dummy_prefix;
  t->model_.finish(options.unk_id, /*byte_fallback=*/true);
  return t;
}

void Llama2cTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  model_.encode(text, add_dummy_prefix_, ids);
}

Result<std::string_view> Llama2cTokenizer::decode(int32_t prev, int32_t id) const {
  TL_CHECK_OR_RETURN(id >= 0 && id < model_.size(), Error::kInvalidArgument,
                     "decode: token id %d is outside the vocabulary [0, %d)", id, model_.size());
  return model_.decode(prev, id, bos_id_);
}

}  // namespace torchlight
