#include "extension/llm/tokenizers/tiktoken_tokenizer.h"

#include <algorithm>
#include <climits>
#include <cstdio>

#include "extension/llm/tokenizers/byte_alphabet.h"
#include "extension/llm/tokenizers/file_contents.h"

namespace torchlight {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Strict standard base64 with padding. False on any malformation.
bool decode_base64(std::string_view in, std::string* out) {
  out->clear();
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after padding
      v[k] = base64_value(c);
      if (v[k] < 0) return false;
    }
    const uint32_t n = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                       (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out->push_back(static_cast<char>(n >> 16));
    if (pad < 2) out->push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out->push_back(static_cast<char>(n & 0xFF));
  }
  return true;
}

// A rank-file line for an error message (base64 text: anything else is escaped).
std::string line_excerpt(std::string_view line) {
  return excerpt(line, 48, /*escape_non_ascii=*/true);
}

}  // namespace

TiktokenOptions TiktokenOptions::r50k_base() {
  TiktokenOptions o;
  o.pattern = PretokenizePattern::kGpt2;
  o.special_tokens = {{"<|endoftext|>", 50256}};
  o.bos_token = "<|endoftext|>";
  o.eos_token = "<|endoftext|>";
  o.expected_ranks = 50256;
  return o;
}

TiktokenOptions TiktokenOptions::cl100k_base() {
  TiktokenOptions o;
  o.pattern = PretokenizePattern::kCl100k;
  o.special_tokens = {{"<|endoftext|>", 100257},
                      {"<|fim_prefix|>", 100258},
                      {"<|fim_middle|>", 100259},
                      {"<|fim_suffix|>", 100260},
                      {"<|endofprompt|>", 100276}};
  o.eos_token = "<|endoftext|>";
  o.expected_ranks = 100256;
  return o;
}

TiktokenOptions TiktokenOptions::o200k_base() {
  TiktokenOptions o;
  o.pattern = PretokenizePattern::kO200k;
  o.special_tokens = {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}};
  o.eos_token = "<|endoftext|>";
  o.expected_ranks = 199998;
  return o;
}

Result<std::unique_ptr<TiktokenTokenizer>> TiktokenTokenizer::load(
    const std::string& path, const TiktokenOptions& options) {
  TL_ASSIGN_OR_RETURN(std::string contents, read_file_contents(path, kMaxTokenizerFileBytes));
  return load_from_contents(contents, path.c_str(), options);
}

Result<std::unique_ptr<TiktokenTokenizer>> TiktokenTokenizer::load_from_contents(
    std::string_view contents, const char* name, const TiktokenOptions& options) {
  std::unique_ptr<TiktokenTokenizer> t(new TiktokenTokenizer());
  std::string bytes;
  size_t line_no = 0;
  int64_t prev_rank = -1;
  size_t pos = 0;
  while (pos < contents.size()) {
    size_t end = contents.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = contents.size();
    std::string_view line = contents.substr(pos, end - pos);
    pos = terminated ? end + 1 : end;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const char* cut = terminated ? "" : " (the file ends inside this line: truncated?)";
    const size_t space = line.find(' ');
    TL_CHECK_OR_RETURN(space != std::string_view::npos && space + 1 < line.size(),
                       Error::kInvalidExternalData,
                       "'%s' line %zu is \"%s\"; expected \"<base64 token> <rank>\"%s", name,
                       line_no, line_excerpt(line).c_str(), cut);
    TL_CHECK_OR_RETURN(decode_base64(line.substr(0, space), &bytes), Error::kInvalidExternalData,
                       "'%s' line %zu: \"%s\" is not valid base64%s", name, line_no,
                       line_excerpt(line.substr(0, space)).c_str(), cut);
    int64_t rank = 0;
    for (const char c : line.substr(space + 1)) {
      TL_CHECK_OR_RETURN(c >= '0' && c <= '9', Error::kInvalidExternalData,
                         "'%s' line %zu: rank \"%s\" is not a non-negative integer%s", name,
                         line_no, line_excerpt(line.substr(space + 1)).c_str(), cut);
      rank = rank * 10 + (c - '0');
      TL_CHECK_OR_RETURN(rank <= TokenTable::kMaxId, Error::kInvalidExternalData,
                         "'%s' line %zu: rank is above %d", name, line_no, TokenTable::kMaxId);
    }
    // Rank files list ranks in increasing order; checking it also catches a
    // last line cut inside its rank.
    TL_CHECK_OR_RETURN(rank > prev_rank, Error::kInvalidExternalData,
                       "'%s' line %zu: rank %lld is not above the previous rank %lld (rank files "
                       "list ranks in increasing order)%s",
                       name, line_no, static_cast<long long>(rank),
                       static_cast<long long>(prev_rank), cut);
    prev_rank = rank;
    TL_CHECK_OR_RETURN(rank < t->ranks_.accepted_id_limit(), Error::kInvalidExternalData,
                       "'%s' line %zu: rank %lld skips too far ahead: after %zu ranks, ranks "
                       "stop at %d (a rank file this sparse is not a real one)",
                       name, line_no, static_cast<long long>(rank), t->ranks_.size(),
                       t->ranks_.accepted_id_limit() - 1);
    const TokenTable::AddResult added = t->ranks_.add(static_cast<int32_t>(rank), bytes);
    TL_CHECK_OR_RETURN(added == TokenTable::AddResult::kAdded, Error::kInvalidExternalData,
                       "'%s' line %zu: token \"%s\" (rank %lld) repeats the token of rank %d",
                       name, line_no, line_excerpt(bytes).c_str(), static_cast<long long>(rank),
                       t->ranks_.find(bytes));
  }
  t->num_ranks_ = t->ranks_.size();
  TL_CHECK_OR_RETURN(t->num_ranks_ > 0, Error::kInvalidExternalData, "'%s' has no ranks", name);
  TL_CHECK_OR_RETURN(options.expected_ranks == 0 || t->num_ranks_ == options.expected_ranks,
                     Error::kInvalidExternalData,
                     "'%s' has %zu ranks, but this encoding has %zu (truncated or a different "
                     "encoding's file?)",
                     name, t->num_ranks_, options.expected_ranks);
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    TL_CHECK_OR_RETURN(t->ranks_.find(std::string_view(&c, 1)) >= 0, Error::kInvalidExternalData,
                       "'%s' has no token for the single byte 0x%02X; byte-level BPE needs all 256",
                       name, b);
  }

  t->vocab_size_ = t->ranks_.id_limit();
  for (const auto& [text, id] : options.special_tokens) {
    TL_CHECK_OR_RETURN(!text.empty(), Error::kInvalidArgument, "special token %d is empty", id);
    TL_CHECK_OR_RETURN(id >= 0 && id <= TokenTable::kMaxId && !t->ranks_.contains(id) &&
                           t->specials_.text_of(id).empty(),
                       Error::kInvalidArgument,
                       "special token \"%s\" has id %d, which is %s", line_excerpt(text).c_str(), id,
                       id < 0 || id > TokenTable::kMaxId ? "out of range"
                       : t->ranks_.contains(id)          ? "a rank of the file"
                                                         : "another special token's");
    TL_CHECK_OR_RETURN(t->specials_.id_of(text) < 0, Error::kInvalidArgument,
                       "special token \"%s\" is listed twice", line_excerpt(text).c_str());
    t->specials_.add(text, id);
    t->vocab_size_ = std::max(t->vocab_size_, id + 1);
  }
  auto special_id = [&](const std::string& token, const char* role, int32_t* out) -> Status {
    if (token.empty()) return Error::kOk;
    *out = t->specials_.id_of(token);
    TL_CHECK_OR_RETURN(*out >= 0, Error::kInvalidArgument,
                       "%s token \"%s\" is not one of the special tokens", role,
                       line_excerpt(token).c_str());
    return Error::kOk;
  };
  TL_RETURN_IF_ERROR(special_id(options.bos_token, "BOS", &t->bos_id_));
  TL_RETURN_IF_ERROR(special_id(options.eos_token, "EOS", &t->eos_id_));
  t->pattern_ = options.pattern;
  t->allow_special_ = options.allow_special;
  return t;
}

void TiktokenTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>* ids) const {
  const int32_t whole = ranks_.find(piece);
  if (whole >= 0) {
    ids->push_back(whole);
    return;
  }
  // tiktoken's byte_pair_merge: parts[i] = (start offset, rank of the pair
  // starting there). Merging pair i drops boundary i + 1 and refreshes the
  // ranks of the pairs now ending and starting at part i.
  struct Part {
    size_t start;
    int32_t rank;
  };
  std::vector<Part> parts;
  parts.reserve(piece.size() + 1);
  auto rank_of = [&](size_t begin, size_t end) -> int32_t {
    const int32_t r = ranks_.find(piece.substr(begin, end - begin));
    return r < 0 ? INT32_MAX : r;
  };
  for (size_t i = 0; i + 1 < piece.size(); ++i) parts.push_back({i, rank_of(i, i + 2)});
  parts.push_back({piece.size() - 1, INT32_MAX});
  parts.push_back({piece.size(), INT32_MAX});
  auto pair_rank = [&](size_t i) -> int32_t {
    return i + 3 < parts.size() ? rank_of(parts[i].start, parts[i + 3].start) : INT32_MAX;
  };
  while (true) {
    int32_t min_rank = INT32_MAX;
    size_t min_i = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].rank < min_rank) {
        min_rank = parts[i].rank;
        min_i = i;
      }
    }
    if (min_rank == INT32_MAX) break;
    if (min_i > 0) parts[min_i - 1].rank = pair_rank(min_i - 1);
    parts[min_i].rank = pair_rank(min_i);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(min_i) + 1);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    // Single bytes are always ranks (checked at load), so every part is.
    ids->push_back(ranks_.find(piece.substr(parts[i].start, parts[i + 1].start - parts[i].start)));
  }
}

void TiktokenTokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>* ids) const {
  while (!text.empty()) {
    const size_t n = next_pretoken(pattern_, text);
    encode_piece(text.substr(0, n), ids);
    text.remove_prefix(n);
  }
}

void TiktokenTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  encode_around_specials(specials_, allow_special_, text, ids,
                         [this](std::string_view piece, std::vector<int32_t>* out) {
                           encode_ordinary(piece, out);
                         });
}

Result<std::string_view> TiktokenTokenizer::decode(int32_t prev, int32_t id) const {
  if (ranks_.contains(id)) return ranks_.bytes(id);
  const std::string_view special = specials_.text_of(id);
  TL_CHECK_OR_RETURN(!special.empty(), Error::kInvalidArgument,
                     "decode: token id %d is neither a rank nor a special token (vocab size %d)",
                     id, vocab_size_);
  return special;
}

}  // namespace torchlight
