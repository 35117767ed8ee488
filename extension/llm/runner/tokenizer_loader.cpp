#include "extension/llm/runner/tokenizer_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "extension/llm/tokenizers/byte_tokenizer.h"
#include "extension/llm/tokenizers/file_contents.h"
#include "extension/llm/tokenizers/gpt2_bpe_tokenizer.h"
#include "extension/llm/tokenizers/hf_tokenizer.h"
#include "extension/llm/tokenizers/llama2c_tokenizer.h"
#include "extension/llm/tokenizers/sentencepiece_tokenizer.h"
#include "extension/llm/tokenizers/tiktoken_tokenizer.h"

namespace torchlight {
namespace {

constexpr size_t kLlama3Ranks = 128000;
constexpr int32_t kLlama3SpecialTokens = 256;

enum class PathKind { kMissing, kFile, kDirectory };

PathKind path_kind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return PathKind::kMissing;
  return S_ISDIR(st.st_mode) ? PathKind::kDirectory : PathKind::kFile;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Llama 3's special tokens, in Meta's order, after the 128,000 ranks.
TiktokenOptions llama3_options() {
  TiktokenOptions o;
  o.pattern = PretokenizePattern::kCl100k;  // Llama 3's pattern is cl100k's.
  const char* named[] = {"<|begin_of_text|>", "<|end_of_text|>",
                         "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
                         "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
                         "<|start_header_id|>", "<|end_header_id|>",
                         "<|reserved_special_token_4|>", "<|eot_id|>"};
  int32_t id = static_cast<int32_t>(kLlama3Ranks);
  for (const char* name : named) o.special_tokens.emplace_back(name, id++);
  for (int32_t reserved = 5; id < static_cast<int32_t>(kLlama3Ranks) + kLlama3SpecialTokens;
       ++reserved) {
    o.special_tokens.emplace_back("<|reserved_special_token_" + std::to_string(reserved) + "|>",
                                  id++);
  }
  o.bos_token = "<|begin_of_text|>";
  o.eos_token = "<|end_of_text|>";
  o.expected_ranks = kLlama3Ranks;
  return o;
}

// Whether `contents` starts like a tiktoken rank file: "<base64> <digits>\n".
bool looks_like_tiktoken(const std::string& contents) {
  const size_t newline = contents.find('\n');
  if (newline == std::string::npos || newline == 0) return false;
  const size_t space = contents.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 >= newline) return false;
  for (size_t i = 0; i < space; ++i) {
    const char c = contents[i];
    const bool base64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
    if (!base64) return false;
  }
  for (size_t i = space + 1; i < newline; ++i) {
    if (contents[i] < '0' || contents[i] > '9') return false;
  }
  return true;
}

Result<LoadedTokenizer> load_tiktoken(const std::string& path, const std::string& contents) {
  const auto ranks = static_cast<size_t>(std::count(contents.begin(), contents.end(), '\n'));
  LoadedTokenizer loaded;
  TiktokenOptions options;
  std::string preset = "cl100k pattern, no special tokens";
  if (ranks == TiktokenOptions::r50k_base().expected_ranks) {
    options = TiktokenOptions::r50k_base();
    preset = "r50k_base";
  } else if (ranks == TiktokenOptions::cl100k_base().expected_ranks) {
    options = TiktokenOptions::cl100k_base();
    preset = "cl100k_base";
  } else if (ranks == TiktokenOptions::o200k_base().expected_ranks) {
    options = TiktokenOptions::o200k_base();
    preset = "o200k_base";
  } else if (ranks == kLlama3Ranks) {
    options = llama3_options();
    preset = "Llama 3";
    loaded.extra_eos_ids.push_back(static_cast<int32_t>(kLlama3Ranks) + 9);  // <|eot_id|>
  }
  Result<std::unique_ptr<TiktokenTokenizer>> tokenizer =
      TiktokenTokenizer::load_from_contents(contents, path.c_str(), options);
  if (!tokenizer.ok()) return tokenizer.status();
  loaded.tokenizer = std::move(tokenizer.get());
  loaded.format = "tiktoken (" + preset + ")";
  loaded.files = path;
  return loaded;
}

Result<LoadedTokenizer> load_gpt2(const std::string& vocab, const std::string& merges) {
  Result<std::unique_ptr<Gpt2BpeTokenizer>> tokenizer = Gpt2BpeTokenizer::load(vocab, merges);
  if (!tokenizer.ok()) return tokenizer.status();
  LoadedTokenizer loaded;
  loaded.tokenizer = std::move(tokenizer.get());
  loaded.format = "GPT-2 BPE";
  loaded.files = vocab + ", " + merges;
  return loaded;
}

// The first of `names` that exists in `dir` (ending in '/' or empty), or "".
std::string find_beside(const std::string& dir, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (path_kind(dir + name) == PathKind::kFile) return dir + name;
  }
  return {};
}

// GPT-2 from either of its two files: the partner is the same name with the
// other suffix ("gpt2-vocab.json" -> "gpt2-merges.txt"), else the standard
// names in the same directory.
Result<LoadedTokenizer> load_gpt2_from(const std::string& path, bool is_vocab) {
  const std::string dir = directory_of(path);
  const std::string name = base_name(path);
  const std::pair<const char*, const char*> pairs[] = {{"vocab.json", "merges.txt"},
                                                       {"encoder.json", "vocab.bpe"}};
  std::string partner;
  for (const auto& [vocab, merges] : pairs) {
    const std::string mine = is_vocab ? vocab : merges;
    const std::string other = is_vocab ? merges : vocab;
    if (ends_with(name, mine)) {
      const std::string candidate = dir + name.substr(0, name.size() - mine.size()) + other;
      if (path_kind(candidate) == PathKind::kFile) partner = candidate;
    }
  }
  if (partner.empty()) {
    partner = is_vocab ? find_beside(dir, {"merges.txt", "vocab.bpe"})
                       : find_beside(dir, {"vocab.json", "encoder.json"});
  }
  TL_CHECK_OR_RETURN(!partner.empty(), Error::kNotFound,
                     "%s: a GPT-2 BPE tokenizer needs %s beside it; none found in '%s'",
                     path.c_str(), is_vocab ? "merges.txt (or vocab.bpe)" : "vocab.json (or "
                                                                            "encoder.json)",
                     dir.empty() ? "." : dir.c_str());
  return is_vocab ? load_gpt2(path, partner) : load_gpt2(partner, path);
}

Result<LoadedTokenizer> load_hf(const std::string& path) {
  Result<std::unique_ptr<HfTokenizer>> t = HfTokenizer::load(path);
  if (!t.ok()) return t.status();
  LoadedTokenizer loaded;
  // Chat models end a turn with <|eot_id|> (Llama 3) before their EOS.
  std::vector<int32_t> eot;
  if (t.get()->encode("<|eot_id|>", false, false, &eot).ok() && eot.size() == 1 &&
      eot[0] != t.get()->eos_id()) {
    loaded.extra_eos_ids.push_back(eot[0]);
  }
  loaded.tokenizer = std::move(t.get());
  loaded.format = "Hugging Face tokenizer.json";
  loaded.files = path;
  return loaded;
}

Result<LoadedTokenizer> load_sentencepiece(const std::string& path, const std::string& contents) {
  Result<std::unique_ptr<SentencePieceTokenizer>> t =
      SentencePieceTokenizer::load_from_contents(contents, path.c_str());
  if (!t.ok()) return t.status();
  LoadedTokenizer loaded;
  loaded.tokenizer = std::move(t.get());
  loaded.format = "SentencePiece BPE";
  loaded.files = path;
  return loaded;
}

Result<LoadedTokenizer> load_llama2c(const std::string& path, const std::string& contents) {
  Result<std::unique_ptr<Llama2cTokenizer>> t =
      Llama2cTokenizer::load_from_contents(contents, path.c_str());
  if (!t.ok()) return t.status();
  LoadedTokenizer loaded;
  loaded.tokenizer = std::move(t.get());
  loaded.format = "llama2.c tokenizer.bin";
  loaded.files = path;
  return loaded;
}

// SentencePiece first when the file starts like a ModelProto (field 1,
// length-delimited) and is not named .bin, else llama2.c first; when both
// fail, the message gives both reasons.
Result<LoadedTokenizer> load_binary(const std::string& path, const std::string& contents) {
  using Loader = Result<LoadedTokenizer> (*)(const std::string&, const std::string&);
  struct Attempt {
    Loader load;
    const char* name;
  };
  const Attempt sentencepiece = {load_sentencepiece, "SentencePiece .model"};
  const Attempt llama2c = {load_llama2c, "llama2.c tokenizer.bin"};
  const bool protobuf_first = contents[0] == '\x0A' && !ends_with(path, ".bin");
  const Attempt order[2] = {protobuf_first ? sentencepiece : llama2c,
                            protobuf_first ? llama2c : sentencepiece};
  Result<LoadedTokenizer> first = order[0].load(path, contents);
  if (first.ok()) return first;
  Result<LoadedTokenizer> second = order[1].load(path, contents);
  if (second.ok()) return second;
  return Status::error(Error::kInvalidExternalData,
                       "%s: not a tokenizer this runner reads. As %s: %s. As %s: %s",
                       path.c_str(), order[0].name, first.status().message(), order[1].name,
                       second.status().message());
}

Result<LoadedTokenizer> load_file(const std::string& path) {
  const std::string name = base_name(path);
  if (ends_with(name, "tokenizer.json")) return load_hf(path);
  if (ends_with(name, ".json")) return load_gpt2_from(path, /*is_vocab=*/true);
  if (ends_with(name, "merges.txt") || ends_with(name, ".bpe")) {
    return load_gpt2_from(path, /*is_vocab=*/false);
  }
  TL_ASSIGN_OR_RETURN(std::string contents, read_file_contents(path, kMaxTokenizerFileBytes));
  TL_CHECK_OR_RETURN(!contents.empty(), Error::kInvalidExternalData,
                     "%s: the tokenizer file is empty", path.c_str());
  if (looks_like_tiktoken(contents)) return load_tiktoken(path, contents);
  TL_CHECK_OR_RETURN(contents[0] != '{', Error::kInvalidExternalData,
                     "%s: a JSON file that is not named *.json; a GPT-2 vocabulary must be "
                     "named vocab.json or encoder.json (next to merges.txt or vocab.bpe)",
                     path.c_str());
  return load_binary(path, contents);
}

}  // namespace

Result<LoadedTokenizer> load_tokenizer(const std::string& spec) {
  TL_CHECK_OR_RETURN(!spec.empty(), Error::kInvalidArgument,
                     "no tokenizer given: pass a tokenizer file or directory, or 'bytes'");
  if (spec == "bytes") {
    TL_ASSIGN_OR_RETURN(std::unique_ptr<ByteTokenizer> bytes, ByteTokenizer::create());
    LoadedTokenizer loaded;
    loaded.tokenizer = std::move(bytes);
    loaded.format = "bytes";
    return loaded;
  }
  switch (path_kind(spec)) {
    case PathKind::kMissing:
      return Status::error(Error::kNotFound,
                           "tokenizer '%s' does not exist (give a tokenizer file, a directory "
                           "holding one, or 'bytes')",
                           spec.c_str());
    case PathKind::kFile:
      return load_file(spec);
    case PathKind::kDirectory:
      break;
  }
  const std::string dir = ends_with(spec, "/") ? spec : spec + "/";
  // tokenizer.json first: Hub repositories often hold vocab.json and
  // merges.txt too, but only tokenizer.json has the whole pipeline.
  if (path_kind(dir + "tokenizer.json") == PathKind::kFile) return load_hf(dir + "tokenizer.json");
  for (const char* vocab : {"vocab.json", "encoder.json"}) {
    if (path_kind(dir + vocab) == PathKind::kFile) return load_gpt2_from(dir + vocab, true);
  }
  for (const char* name : {"tokenizer.model", "tokenizer.bin"}) {
    if (path_kind(dir + name) == PathKind::kFile) return load_file(dir + name);
  }
  return Status::error(Error::kNotFound,
                       "%s: the directory holds no tokenizer file this runner knows (tried "
                       "tokenizer.json, vocab.json, encoder.json, tokenizer.model, tokenizer.bin)",
                       spec.c_str());
}

}  // namespace torchlight
