#include "extension/llm/tokenizers/gpt2_bpe_tokenizer.h"

#include <algorithm>

#include <climits>
#include <unordered_set>

#include "extension/llm/tokenizers/byte_alphabet.h"
#include "extension/llm/tokenizers/file_contents.h"
#include "extension/llm/tokenizers/pretokenizer.h"
#include "extension/llm/tokenizers/vocab_json.h"

namespace torchlight {
namespace {

// A token or line for an error message.
std::string printable(std::string_view s) { return excerpt(s, 60); }

}  // namespace

Result<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::load(
    const std::string& vocab_json_path, const std::string& merges_path,
    const Gpt2BpeOptions& options) {
  TL_ASSIGN_OR_RETURN(std::string vocab, read_file_contents(vocab_json_path, kMaxTokenizerFileBytes));
  TL_ASSIGN_OR_RETURN(std::string merges, read_file_contents(merges_path, kMaxTokenizerFileBytes));
  return load_from_contents(vocab, vocab_json_path.c_str(), merges, merges_path.c_str(), options);
}

Result<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::load_from_contents(
    std::string_view vocab_json, const char* vocab_name, std::string_view merges_text,
    const char* merges_name, const Gpt2BpeOptions& options) {
  std::unique_ptr<Gpt2BpeTokenizer> t(new Gpt2BpeTokenizer());
  TL_ASSIGN_OR_RETURN(std::vector<VocabJsonEntry> entries, parse_vocab_json(vocab_json, vocab_name));
  TL_CHECK_OR_RETURN(!entries.empty(), Error::kInvalidExternalData, "'%s' has no tokens",
                     vocab_name);

  // In id order, which the token table needs to bound its size (JSON
  // objects have no order).
  std::stable_sort(entries.begin(), entries.end(),
                   [](const VocabJsonEntry& a, const VocabJsonEntry& b) { return a.id < b.id; });
  const std::unordered_set<std::string> special(options.special_tokens.begin(),
                                                options.special_tokens.end());
  std::string bytes;
  for (const VocabJsonEntry& e : entries) {
    uint32_t bad = 0;
    if (special.count(e.key) != 0) {
      bytes = e.key;
    } else if (!alphabet_to_bytes(e.key, &bytes, &bad)) {
      return Status::error(Error::kInvalidExternalData,
                           "'%s': token \"%s\" (id %d) has code point U+%04X, which is not in "
                           "GPT-2's byte alphabet (list it as a special token if it is one)",
                           vocab_name, printable(e.key).c_str(), e.id, bad);
    }
    switch (t->tokens_.add(e.id, bytes)) {
      case TokenTable::AddResult::kAdded:
        break;
      case TokenTable::AddResult::kDuplicateId:
        return Status::error(Error::kInvalidExternalData,
                             "'%s': id %d is given to two tokens (\"%s\" and \"%s\")", vocab_name,
                             e.id, printable(t->tokens_.bytes(e.id)).c_str(),
                             printable(e.key).c_str());
      case TokenTable::AddResult::kDuplicateBytes:
        return Status::error(Error::kInvalidExternalData,
                             "'%s': tokens %d and %d have the same bytes \"%s\"", vocab_name,
                             t->tokens_.find(bytes), e.id, printable(bytes).c_str());
      case TokenTable::AddResult::kIdOutOfRange:
        return Status::error(Error::kInvalidExternalData,
                             "'%s': token \"%s\" has id %d, but with %zu tokens below it ids "
                             "stop at %d (a vocabulary this sparse is not a real one)",
                             vocab_name, printable(e.key).c_str(), e.id, t->tokens_.size(),
                             t->tokens_.accepted_id_limit() - 1);
    }
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    t->byte_token_[b] = t->tokens_.find(std::string_view(&c, 1));
    TL_CHECK_OR_RETURN(t->byte_token_[b] >= 0, Error::kInvalidExternalData,
                       "'%s' has no token for the single byte 0x%02X; byte-level BPE needs all 256",
                       vocab_name, b);
  }

  // merges.txt: one merge per line, rank = order.
  std::vector<bool> produced(static_cast<size_t>(t->tokens_.id_limit()), false);
  std::string left_bytes;
  std::string right_bytes;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < merges_text.size()) {
    size_t end = merges_text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = merges_text.size();
    std::string_view line = merges_text.substr(pos, end - pos);
    pos = terminated ? end + 1 : end;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.substr(0, 8) == "#version") continue;
    TL_CHECK_OR_RETURN(!line.empty(), Error::kInvalidExternalData,
                       "'%s' line %zu is empty; expected \"<left> <right>\"", merges_name,
                       line_no);
    const size_t space = line.find(' ');
    TL_CHECK_OR_RETURN(space != std::string_view::npos && space != 0 &&
                           space + 1 < line.size() &&
                           line.find(' ', space + 1) == std::string_view::npos,
                       Error::kInvalidExternalData,
                       "'%s' line %zu is \"%s\"; expected two tokens separated by one space%s",
                       merges_name, line_no, printable(line).c_str(),
                       terminated ? "" : " (the file ends inside this line: truncated?)");
    const std::string_view left = line.substr(0, space);
    const std::string_view right = line.substr(space + 1);
    uint32_t bad = 0;
    TL_CHECK_OR_RETURN(alphabet_to_bytes(left, &left_bytes, &bad) &&
                           alphabet_to_bytes(right, &right_bytes, &bad),
                       Error::kInvalidExternalData,
                       "'%s' line %zu: code point U+%04X is not in GPT-2's byte alphabet",
                       merges_name, line_no, bad);
    const int32_t l = t->tokens_.find(left_bytes);
    const int32_t r = t->tokens_.find(right_bytes);
    const int32_t m = t->tokens_.find(left_bytes + right_bytes);
    TL_CHECK_OR_RETURN(l >= 0 && r >= 0 && m >= 0, Error::kInvalidExternalData,
                       "'%s' line %zu merges \"%s\" + \"%s\", but %s is not in the vocabulary%s",
                       merges_name, line_no, printable(left).c_str(), printable(right).c_str(),
                       l < 0 ? "the left part" : r < 0 ? "the right part" : "the result",
                       terminated ? "" : " (the file ends inside this line: truncated?)");
    TL_CHECK_OR_RETURN(line_no - 1 < static_cast<size_t>(INT32_MAX), Error::kInvalidExternalData,
                       "'%s' has too many merges", merges_name);
    const auto rank = static_cast<int32_t>(t->merges_.size());
    TL_CHECK_OR_RETURN(t->merges_.add(l, r, {rank, m}), Error::kInvalidExternalData,
                       "'%s' line %zu repeats the merge \"%s\" + \"%s\" (rank %d)", merges_name,
                       line_no, printable(left).c_str(), printable(right).c_str(),
                       t->merges_.find(l, r)->rank);
    produced[static_cast<size_t>(m)] = true;
  }

  // Every token must be a byte, a special token or some merge's result:
  // otherwise encode() could never produce it, and the usual cause is a
  // merges file cut short.
  size_t unreachable = 0;
  int32_t first_unreachable = -1;
  for (int32_t id = 0; id < t->tokens_.id_limit(); ++id) {
    if (!t->tokens_.contains(id) || produced[static_cast<size_t>(id)] ||
        t->tokens_.bytes(id).size() == 1) {
      continue;
    }
    bool is_special = false;
    for (const std::string& s : options.special_tokens) is_special |= t->tokens_.bytes(id) == s;
    if (is_special) continue;
    if (unreachable++ == 0) first_unreachable = id;
  }
  TL_CHECK_OR_RETURN(unreachable == 0, Error::kInvalidExternalData,
                     "'%s' has %zu merges, but %zu tokens of '%s' are produced by none of them "
                     "(first: id %d \"%s\"); the merges file looks truncated, or those tokens "
                     "are special tokens missing from the options",
                     merges_name, t->merges_.size(), unreachable, vocab_name, first_unreachable,
                     printable(t->tokens_.bytes(first_unreachable)).c_str());

  for (const std::string& s : options.special_tokens) {
    const int32_t id = t->tokens_.find(s);
    TL_CHECK_OR_RETURN(id >= 0, Error::kInvalidArgument,
                       "special token \"%s\" is not in '%s'", printable(s).c_str(), vocab_name);
    t->specials_.add(s, id);
  }
  auto special_id = [&](const std::string& name, const char* role, int32_t* out) -> Status {
    if (name.empty()) return Error::kOk;
    *out = t->specials_.id_of(name);
    TL_CHECK_OR_RETURN(*out >= 0, Error::kInvalidArgument,
                       "%s token \"%s\" is not one of the special tokens", role,
                       printable(name).c_str());
    return Error::kOk;
  };
  TL_RETURN_IF_ERROR(special_id(options.bos_token, "BOS", &t->bos_id_));
  TL_RETURN_IF_ERROR(special_id(options.eos_token, "EOS", &t->eos_id_));
  t->allow_special_ = options.allow_special;
  return t;
}

void Gpt2BpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>* ids) const {
  // The piece as symbols, merged in place.
  const size_t base = ids->size();
  for (const char c : piece) ids->push_back(byte_token_[static_cast<uint8_t>(c)]);
  int32_t* word = ids->data() + base;
  size_t n = piece.size();
  while (n >= 2) {
    int32_t best_rank = INT32_MAX;
    int32_t left = -1;
    int32_t right = -1;
    int32_t result = -1;
    for (size_t i = 0; i + 1 < n; ++i) {
      const MergeTable::Merge* merge = merges_.find(word[i], word[i + 1]);
      if (merge != nullptr && merge->rank < best_rank) {
        best_rank = merge->rank;
        left = word[i];
        right = word[i + 1];
        result = merge->result;
      }
    }
    if (result < 0) break;
    // Merge every occurrence, left to right, as encoder.py does.
    size_t out = 0;
    for (size_t i = 0; i < n;) {
      if (i + 1 < n && word[i] == left && word[i + 1] == right) {
        word[out++] = result;
        i += 2;
      } else {
        word[out++] = word[i++];
      }
    }
    n = out;
  }
  ids->resize(base + n);
}

void Gpt2BpeTokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>* ids) const {
  while (!text.empty()) {
    const size_t n = next_pretoken(PretokenizePattern::kGpt2, text);
    encode_piece(text.substr(0, n), ids);
    text.remove_prefix(n);
  }
}

void Gpt2BpeTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  encode_around_specials(specials_, allow_special_, text, ids,
                         [this](std::string_view piece, std::vector<int32_t>* out) {
                           encode_ordinary(piece, out);
                         });
}

Result<std::string_view> Gpt2BpeTokenizer::decode(int32_t prev, int32_t id) const {
  TL_CHECK_OR_RETURN(tokens_.contains(id), Error::kInvalidArgument,
                     "decode: token id %d is not in this GPT-2 vocabulary (size %d)", id,
                     tokens_.id_limit());
  return tokens_.bytes(id);
}

}  // namespace torchlight
