// HfTokenizer::load: reads tokenizer.json into the pipeline and tables.
//
// nlohmann/json parses (with exceptions off: its SAX error callback reports
// the position instead of throwing); every field is type-checked before it
// is read, so a malformed file is an error naming its JSON path.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "extension/llm/tokenizers/byte_alphabet.h"
#include "extension/llm/tokenizers/file_contents.h"
#include "extension/llm/tokenizers/hf_tokenizer.h"

namespace torchlight {

using Json = nlohmann::json;

namespace {

// Builds the document like nlohmann's own DOM parser, but keeps the first
// error's message (which names line and column) instead of throwing.
class DomParser {
 public:
  explicit DomParser(Json* root) : dom_(*root, /*allow_exceptions=*/false) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(std::string& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return dom_.start_object(n); }
  bool key(std::string& v) { return dom_.key(v); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    if (error_.empty()) error_ = e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::string error_;
};

Result<Json> parse_json(std::string_view text, const char* name) {
  Json root;
  DomParser parser(&root);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &parser);
  TL_CHECK_OR_RETURN(ok && parser.error().empty(), Error::kInvalidExternalData,
                     "'%s' is not valid JSON: %s", name,
                     parser.error().empty() ? "parse failed" : parser.error().c_str());
  return root;
}

std::string token_text(std::string_view s) { return excerpt(s, 60); }

}  // namespace

// Fills an HfTokenizer from the parsed document; a friend of the class.
class HfTokenizerBuilder {
 public:
  HfTokenizerBuilder(HfTokenizer* t, const char* name) : t_(t), name_(name) {}

  Status build(const Json& root, const Json* config, const HfTokenizerOptions& options);

 private:
  Status object_at(const Json& j, const char* path) const {
    TL_CHECK_OR_RETURN(j.is_object(), Error::kInvalidExternalData,
                       "'%s': %s must be a JSON object", name_, path);
    return Error::kOk;
  }
  // `*out` = j[key] as a string; `required` false lets it be absent or null.
  Status get_string(const Json& j, const char* key, const std::string& path, bool required,
                    std::string* out) const;
  Status get_bool(const Json& j, const char* key, const std::string& path, bool* out) const;
  // A "Sequence" component: `(this->*read)(element, path)` for each element of j[key].
  Status sequence(const Json& j, const char* key, const std::string& path,
                  Status (HfTokenizerBuilder::*read)(const Json&, const std::string&));
  Status unsupported(const std::string& path, const std::string& type) const {
    return Status::error(Error::kNotSupported,
                         "'%s': %s is a \"%s\", which this runner does not implement (supported: "
                         "see extension/llm/tokenizers/hf_tokenizer.h)",
                         name_, path.c_str(), type.c_str());
  }

  Status normalizer(const Json& j, const std::string& path);
  Status pre_tokenizer(const Json& j, const std::string& path);
  Status decoder(const Json& j, const std::string& path);
  Status model(const Json& j);
  Status added_tokens(const Json& j);
  Status special_ids(const Json& root, const Json* config, const HfTokenizerOptions& options);
  Status decoded_table();

  HfTokenizer* t_;
  const char* name_;
  HfTokenizer::Pipeline& p() { return t_->pipeline_; }
};

Status HfTokenizerBuilder::get_string(const Json& j, const char* key, const std::string& path,
                                      bool required, std::string* out) const {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    TL_CHECK_OR_RETURN(!required, Error::kInvalidExternalData, "'%s': %s.%s is missing", name_,
                       path.c_str(), key);
    out->clear();
    return Error::kOk;
  }
  TL_CHECK_OR_RETURN(it->is_string(), Error::kInvalidExternalData,
                     "'%s': %s.%s must be a string", name_, path.c_str(), key);
  *out = it->get_ref<const std::string&>();
  return Error::kOk;
}

Status HfTokenizerBuilder::get_bool(const Json& j, const char* key, const std::string& path,
                                    bool* out) const {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Error::kOk;  // keep the default
  TL_CHECK_OR_RETURN(it->is_boolean(), Error::kInvalidExternalData,
                     "'%s': %s.%s must be true or false", name_, path.c_str(), key);
  *out = it->get<bool>();
  return Error::kOk;
}

Status HfTokenizerBuilder::sequence(const Json& j, const char* key, const std::string& path,
                                    Status (HfTokenizerBuilder::*read)(const Json&,
                                                                      const std::string&)) {
  const auto it = j.find(key);
  TL_CHECK_OR_RETURN(it != j.end() && it->is_array(), Error::kInvalidExternalData,
                     "'%s': %s.%s must be an array", name_, path.c_str(), key);
  for (size_t i = 0; i < it->size(); ++i) {
    TL_RETURN_IF_ERROR((this->*read)((*it)[i], path + "." + key + "[" + std::to_string(i) + "]"));
  }
  return Error::kOk;
}

Status HfTokenizerBuilder::normalizer(const Json& j, const std::string& path) {
  if (j.is_null()) return Error::kOk;
  TL_RETURN_IF_ERROR(object_at(j, path.c_str()));
  std::string type;
  TL_RETURN_IF_ERROR(get_string(j, "type", path, true, &type));
  if (type == "Sequence") {
    return sequence(j, "normalizers", path, &HfTokenizerBuilder::normalizer);
  }
  HfTokenizer::NormalizeStep step;
  if (type == "Prepend") {
    step.kind = HfTokenizer::NormalizeStep::Kind::kPrepend;
    TL_RETURN_IF_ERROR(get_string(j, "prepend", path, true, &step.to));
  } else if (type == "Replace") {
    step.kind = HfTokenizer::NormalizeStep::Kind::kReplace;
    const auto pattern = j.find("pattern");
    TL_CHECK_OR_RETURN(pattern != j.end() && pattern->is_object(), Error::kInvalidExternalData,
                       "'%s': %s.pattern must be an object", name_, path.c_str());
    if (pattern->find("String") == pattern->end()) {
      return unsupported(path + ".pattern", "Regex replacement");
    }
    TL_RETURN_IF_ERROR(get_string(*pattern, "String", path + ".pattern", true, &step.from));
    TL_RETURN_IF_ERROR(get_string(j, "content", path, true, &step.to));
  } else {
    return unsupported(path, type);
  }
  p().normalizers.push_back(std::move(step));
  return Error::kOk;
}

Status HfTokenizerBuilder::pre_tokenizer(const Json& j, const std::string& path) {
  using Step = HfTokenizer::PreTokenizeStep;
  if (j.is_null()) return Error::kOk;
  TL_RETURN_IF_ERROR(object_at(j, path.c_str()));
  std::string type;
  TL_RETURN_IF_ERROR(get_string(j, "type", path, true, &type));
  if (type == "Sequence") {
    return sequence(j, "pretokenizers", path, &HfTokenizerBuilder::pre_tokenizer);
  }
  Step step;
  if (type == "ByteLevel") {
    step.kind = Step::Kind::kByteLevel;
    step.use_regex = true;  // the library's defaults
    step.add_prefix_space = true;
    TL_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", path, &step.add_prefix_space));
    TL_RETURN_IF_ERROR(get_bool(j, "use_regex", path, &step.use_regex));
  } else if (type == "Metaspace") {
    step.kind = Step::Kind::kMetaspace;
    TL_RETURN_IF_ERROR(get_string(j, "replacement", path, true, &step.text));
    TL_CHECK_OR_RETURN(!step.text.empty(), Error::kInvalidExternalData,
                       "'%s': %s.replacement is empty", name_, path.c_str());
    std::string scheme;
    TL_RETURN_IF_ERROR(get_string(j, "prepend_scheme", path, false, &scheme));
    bool add_prefix_space = true;  // the field older files write instead
    TL_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", path, &add_prefix_space));
    if (scheme.empty()) scheme = add_prefix_space ? "always" : "never";
    if (scheme == "always") {
      step.prepend = Step::Prepend::kAlways;
    } else if (scheme == "first") {
      step.prepend = Step::Prepend::kFirst;
    } else if (scheme == "never") {
      step.prepend = Step::Prepend::kNever;
    } else {
      return unsupported(path + ".prepend_scheme", scheme);
    }
    step.split = true;
    TL_RETURN_IF_ERROR(get_bool(j, "split", path, &step.split));
  } else if (type == "Split") {
    std::string behavior;
    TL_RETURN_IF_ERROR(get_string(j, "behavior", path, true, &behavior));
    if (behavior != "Isolated") return unsupported(path + ".behavior", behavior);
    bool invert = false;
    TL_RETURN_IF_ERROR(get_bool(j, "invert", path, &invert));
    if (invert) return unsupported(path + ".invert", "true");
    const auto pattern = j.find("pattern");
    TL_CHECK_OR_RETURN(pattern != j.end() && pattern->is_object(), Error::kInvalidExternalData,
                       "'%s': %s.pattern must be an object", name_, path.c_str());
    if (pattern->find("String") != pattern->end()) {
      step.kind = Step::Kind::kSplitString;
      TL_RETURN_IF_ERROR(get_string(*pattern, "String", path + ".pattern", true, &step.text));
      TL_CHECK_OR_RETURN(!step.text.empty(), Error::kInvalidExternalData,
                         "'%s': %s.pattern.String is empty", name_, path.c_str());
    } else {
      std::string regex;
      TL_RETURN_IF_ERROR(get_string(*pattern, "Regex", path + ".pattern", true, &regex));
      step.kind = Step::Kind::kSplitPattern;
      if (!pretokenize_pattern_from_regex(regex, &step.pattern)) {
        return Status::error(Error::kNotSupported,
                             "'%s': %s.pattern.Regex is \"%s\"; this runner implements only the "
                             "GPT-2 and cl100k (Llama 3) pre-tokenizer regexes",
                             name_, path.c_str(), excerpt(regex, 120).c_str());
      }
    }
  } else {
    return unsupported(path, type);
  }
  p().pre_tokenizers.push_back(std::move(step));
  return Error::kOk;
}

Status HfTokenizerBuilder::decoder(const Json& j, const std::string& path) {
  if (j.is_null()) return Error::kOk;
  TL_RETURN_IF_ERROR(object_at(j, path.c_str()));
  std::string type;
  TL_RETURN_IF_ERROR(get_string(j, "type", path, true, &type));
  if (type == "Sequence") {
    return sequence(j, "decoders", path, &HfTokenizerBuilder::decoder);
  } else if (type == "ByteLevel") {
    p().decode_byte_level = true;
  } else if (type == "ByteFallback") {
    p().decode_byte_fallback = true;
  } else if (type == "Fuse") {
    // Joins the tokens' texts: what decoding one token at a time does anyway.
  } else if (type == "Replace") {
    const auto pattern = j.find("pattern");
    TL_CHECK_OR_RETURN(pattern != j.end() && pattern->is_object(), Error::kInvalidExternalData,
                       "'%s': %s.pattern must be an object", name_, path.c_str());
    if (pattern->find("String") == pattern->end()) {
      return unsupported(path + ".pattern", "Regex replacement");
    }
    std::pair<std::string, std::string> r;
    TL_RETURN_IF_ERROR(get_string(*pattern, "String", path + ".pattern", true, &r.first));
    TL_RETURN_IF_ERROR(get_string(j, "content", path, true, &r.second));
    p().decode_replacements.push_back(std::move(r));
  } else if (type == "Strip") {
    std::string content;
    TL_RETURN_IF_ERROR(get_string(j, "content", path, true, &content));
    const auto start = j.find("start");
    const auto stop = j.find("stop");
    TL_CHECK_OR_RETURN(start != j.end() && start->is_number_unsigned() && stop != j.end() &&
                           stop->is_number_unsigned(),
                       Error::kInvalidExternalData,
                       "'%s': %s.start and .stop must be non-negative integers", name_,
                       path.c_str());
    if (stop->get<uint64_t>() != 0 || start->get<uint64_t>() > 1) {
      return unsupported(path, "Strip of more than one leading character, or of trailing ones");
    }
    if (start->get<uint64_t>() == 1) p().strip_at_start = content;
  } else if (type == "Metaspace") {
    std::string replacement;
    TL_RETURN_IF_ERROR(get_string(j, "replacement", path, true, &replacement));
    p().decode_replacements.emplace_back(replacement, " ");
    std::string scheme;
    TL_RETURN_IF_ERROR(get_string(j, "prepend_scheme", path, false, &scheme));
    bool add_prefix_space = true;
    TL_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", path, &add_prefix_space));
    if (scheme.empty()) scheme = add_prefix_space ? "always" : "never";
    if (scheme != "never") p().strip_at_start = " ";
  } else {
    return unsupported(path, type);
  }
  return Error::kOk;
}

Status HfTokenizerBuilder::model(const Json& m) {
  TL_RETURN_IF_ERROR(object_at(m, "model"));
  std::string type;
  TL_RETURN_IF_ERROR(get_string(m, "type", "model", false, &type));
  // Files from older versions of the library omit the type of a BPE model.
  if (type.empty() && m.find("merges") != m.end()) type = "BPE";
  if (type != "BPE") return unsupported("model", type.empty() ? "model without a type" : type);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    std::string value;
    TL_RETURN_IF_ERROR(get_string(m, key, "model", false, &value));
    if (!value.empty()) return unsupported(std::string("model.") + key, value);
  }
  const auto dropout = m.find("dropout");
  if (dropout != m.end() && !dropout->is_null() &&
      !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    return unsupported("model.dropout", "non-zero dropout (a training-time option)");
  }
  TL_RETURN_IF_ERROR(get_bool(m, "byte_fallback", "model", &p().byte_fallback));
  TL_RETURN_IF_ERROR(get_bool(m, "fuse_unk", "model", &p().fuse_unk));
  TL_RETURN_IF_ERROR(get_bool(m, "ignore_merges", "model", &p().ignore_merges));

  const auto vocab = m.find("vocab");
  TL_CHECK_OR_RETURN(vocab != m.end() && vocab->is_object() && !vocab->empty(),
                     Error::kInvalidExternalData,
                     "'%s': model.vocab must be a non-empty object of token: id", name_);
  std::vector<std::pair<int32_t, const std::string*>> entries;
  entries.reserve(vocab->size());
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    TL_CHECK_OR_RETURN(it->is_number_unsigned() && it->get<uint64_t>() <= TokenTable::kMaxId,
                       Error::kInvalidExternalData,
                       "'%s': model.vocab[\"%s\"] must be an id in [0, %d]", name_,
                       token_text(it.key()).c_str(), TokenTable::kMaxId);
    entries.emplace_back(static_cast<int32_t>(it->get<uint64_t>()), &it.key());
  }
  std::sort(entries.begin(), entries.end());  // the token table wants increasing ids
  for (const auto& [id, text] : entries) {
    const TokenTable::AddResult r = t_->vocab_.add(id, *text);
    TL_CHECK_OR_RETURN(r != TokenTable::AddResult::kDuplicateId, Error::kInvalidExternalData,
                       "'%s': model.vocab gives id %d to \"%s\" and \"%s\"", name_, id,
                       token_text(t_->vocab_.bytes(id)).c_str(), token_text(*text).c_str());
    TL_CHECK_OR_RETURN(r != TokenTable::AddResult::kIdOutOfRange, Error::kInvalidExternalData,
                       "'%s': model.vocab[\"%s\"] = %d leaves too large a gap after %zu tokens",
                       name_, token_text(*text).c_str(), id, t_->vocab_.size());
  }

  std::string unk;
  TL_RETURN_IF_ERROR(get_string(m, "unk_token", "model", false, &unk));
  if (!unk.empty()) {
    p().unk_id = t_->vocab_.find(unk);
    TL_CHECK_OR_RETURN(p().unk_id >= 0, Error::kInvalidExternalData,
                       "'%s': model.unk_token \"%s\" is not in model.vocab", name_,
                       token_text(unk).c_str());
  }
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    snprintf(piece, sizeof(piece), "<0x%02X>", b);
    t_->byte_piece_[b] = t_->vocab_.find(piece);
  }

  const auto merges = m.find("merges");
  TL_CHECK_OR_RETURN(merges != m.end() && merges->is_array(), Error::kInvalidExternalData,
                     "'%s': model.merges must be an array", name_);
  TL_CHECK_OR_RETURN(merges->size() < static_cast<size_t>(INT32_MAX), Error::kInvalidExternalData,
                     "'%s': model.merges has too many entries", name_);
  std::string joined;
  for (size_t i = 0; i < merges->size(); ++i) {
    const Json& e = (*merges)[i];
    std::string_view left;
    std::string_view right;
    if (e.is_string()) {  // "left right"
      const std::string& s = e.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      TL_CHECK_OR_RETURN(space != std::string::npos && space != 0 && space + 1 < s.size() &&
                             s.find(' ', space + 1) == std::string::npos,
                         Error::kInvalidExternalData,
                         "'%s': model.merges[%zu] is \"%s\"; expected two tokens separated by "
                         "one space",
                         name_, i, token_text(s).c_str());
      left = std::string_view(s).substr(0, space);
      right = std::string_view(s).substr(space + 1);
    } else {  // ["left", "right"]
      TL_CHECK_OR_RETURN(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string(),
                         Error::kInvalidExternalData,
                         "'%s': model.merges[%zu] must be \"a b\" or [\"a\", \"b\"]", name_, i);
      left = e[0].get_ref<const std::string&>();
      right = e[1].get_ref<const std::string&>();
    }
    joined.assign(left).append(right);
    const int32_t l = t_->vocab_.find(left);
    const int32_t r = t_->vocab_.find(right);
    const int32_t result = t_->vocab_.find(joined);
    TL_CHECK_OR_RETURN(l >= 0 && r >= 0 && result >= 0, Error::kInvalidExternalData,
                       "'%s': model.merges[%zu] merges \"%s\" + \"%s\", but %s is not in "
                       "model.vocab",
                       name_, i, token_text(left).c_str(), token_text(right).c_str(),
                       l < 0 ? "the left part" : r < 0 ? "the right part" : "the result");
    // A repeated pair keeps its first (lowest) rank.
    t_->merges_.add(l, r, {static_cast<int32_t>(i), result});
  }
  return Error::kOk;
}

Status HfTokenizerBuilder::added_tokens(const Json& j) {
  if (j.is_null()) return Error::kOk;
  TL_CHECK_OR_RETURN(j.is_array(), Error::kInvalidExternalData,
                     "'%s': added_tokens must be an array", name_);
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const Json& a = j[i];
    TL_RETURN_IF_ERROR(object_at(a, path.c_str()));
    const auto id = a.find("id");
    TL_CHECK_OR_RETURN(id != a.end() && id->is_number_unsigned() &&
                           id->get<uint64_t>() <= TokenTable::kMaxId,
                       Error::kInvalidExternalData, "'%s': %s.id must be an id in [0, %d]", name_,
                       path.c_str(), TokenTable::kMaxId);
    std::string content;
    TL_RETURN_IF_ERROR(get_string(a, "content", path, true, &content));
    TL_CHECK_OR_RETURN(!content.empty(), Error::kInvalidExternalData,
                       "'%s': %s.content is empty", name_, path.c_str());
    bool special = false;
    TL_RETURN_IF_ERROR(get_bool(a, "special", path, &special));
    for (const char* flag : {"single_word", "lstrip", "rstrip"}) {
      bool set = false;
      TL_RETURN_IF_ERROR(get_bool(a, flag, path, &set));
      if (set) return unsupported(path + "." + flag, "true");
    }
    const auto token_id = static_cast<int32_t>(id->get<uint64_t>());
    const int32_t in_vocab = t_->vocab_.find(content);
    TL_CHECK_OR_RETURN(in_vocab < 0 || in_vocab == token_id, Error::kInvalidExternalData,
                       "'%s': %s is \"%s\" with id %d, but model.vocab gives it id %d", name_,
                       path.c_str(), token_text(content).c_str(), token_id, in_vocab);
    TL_CHECK_OR_RETURN(t_->added_.id_of(content) < 0, Error::kInvalidExternalData,
                       "'%s': %s repeats the added token \"%s\"", name_, path.c_str(),
                       token_text(content).c_str());
    t_->added_.add(content, token_id);
    if (!special) t_->added_plain_.add(content, token_id);
  }
  return Error::kOk;
}

Status HfTokenizerBuilder::special_ids(const Json& root, const Json* config,
                                       const HfTokenizerOptions& options) {
  // bos_token / eos_token in tokenizer_config.json: a string or {"content": ...}.
  auto from_config = [&](const char* key, std::string* out) -> Status {
    if (config == nullptr || !config->is_object()) return Error::kOk;
    const auto it = config->find(key);
    if (it == config->end() || it->is_null()) return Error::kOk;
    if (it->is_object()) return get_string(*it, "content", std::string("tokenizer_config.") + key, true, out);
    TL_CHECK_OR_RETURN(it->is_string(), Error::kInvalidExternalData,
                       "tokenizer_config.json beside '%s': %s must be a string or an object",
                       name_, key);
    *out = it->get_ref<const std::string&>();
    return Error::kOk;
  };
  std::string bos = options.bos_token;
  std::string eos = options.eos_token;
  if (bos.empty()) TL_RETURN_IF_ERROR(from_config("bos_token", &bos));
  if (eos.empty()) TL_RETURN_IF_ERROR(from_config("eos_token", &eos));
  if (bos.empty()) {  // TemplateProcessing: [{"SpecialToken": {"id": "<s>"}}, {"Sequence": ...}]
    const auto post = root.find("post_processor");
    if (post != root.end() && post->is_object()) {
      const auto single = post->find("single");
      if (single != post->end() && single->is_array() && !single->empty() &&
          (*single)[0].is_object()) {
        const auto special = (*single)[0].find("SpecialToken");
        if (special != (*single)[0].end() && special->is_object()) {
          TL_RETURN_IF_ERROR(get_string(*special, "id", "post_processor.single[0].SpecialToken",
                                        false, &bos));
        }
      }
    }
  }
  auto resolve = [&](const std::string& text, const char* role, bool from_options,
                     int32_t* out) -> Status {
    if (text.empty()) return Error::kOk;
    *out = t_->added_.id_of(text);
    if (*out < 0) *out = t_->vocab_.find(text);
    TL_CHECK_OR_RETURN(*out >= 0, from_options ? Error::kInvalidArgument : Error::kInvalidExternalData,
                       "'%s': the %s token \"%s\" is neither an added token nor in model.vocab",
                       name_, role, token_text(text).c_str());
    return Error::kOk;
  };
  TL_RETURN_IF_ERROR(resolve(bos, "BOS", !options.bos_token.empty(), &t_->bos_id_));
  TL_RETURN_IF_ERROR(resolve(eos, "EOS", !options.eos_token.empty(), &t_->eos_id_));
  return Error::kOk;
}

// Every id's decoded bytes: the model's tokens through the decoder chain,
// added tokens as written.
Status HfTokenizerBuilder::decoded_table() {
  const HfTokenizer::Pipeline& pipe = p();
  std::string text;
  std::string bytes;
  const int32_t limit = std::max(t_->vocab_.id_limit(), t_->added_.max_id() + 1);
  std::vector<int16_t> byte_of(static_cast<size_t>(limit), -1);  // "<0xHH>" id -> HH
  for (int b = 0; b < 256; ++b) {
    if (t_->byte_piece_[b] >= 0) byte_of[static_cast<size_t>(t_->byte_piece_[b])] = static_cast<int16_t>(b);
  }
  for (int32_t id = 0; id < limit; ++id) {
    std::string_view added = t_->added_.text_of(id);
    if (!added.empty()) {
      text.assign(added);
    } else if (t_->vocab_.contains(id)) {
      text.assign(t_->vocab_.bytes(id));
      const int byte = pipe.decode_byte_fallback ? byte_of[static_cast<size_t>(id)] : -1;
      if (byte >= 0) {
        text.assign(1, static_cast<char>(byte));
      } else {
        for (const auto& [from, to] : pipe.decode_replacements) {
          for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
            text.replace(pos, from.size(), to);
          }
        }
        uint32_t bad = 0;
        if (pipe.decode_byte_level) {
          TL_CHECK_OR_RETURN(alphabet_to_bytes(text, &bytes, &bad), Error::kInvalidExternalData,
                             "'%s': token %d \"%s\" has code point U+%04X, outside the "
                             "byte-level alphabet its ByteLevel decoder needs",
                             name_, id, token_text(text).c_str(), bad);
          text.swap(bytes);
        }
      }
    } else {
      continue;  // an unused id
    }
    const TokenTable::AddResult r = t_->decoded_.add(id, text);
    TL_CHECK_OR_RETURN(r != TokenTable::AddResult::kIdOutOfRange, Error::kInvalidExternalData,
                       "'%s': token id %d leaves too large a gap in the vocabulary", name_, id);
  }
  return Error::kOk;
}

Status HfTokenizerBuilder::build(const Json& root, const Json* config,
                                 const HfTokenizerOptions& options) {
  TL_RETURN_IF_ERROR(object_at(root, "the document"));
  const auto model_it = root.find("model");
  TL_CHECK_OR_RETURN(model_it != root.end(), Error::kInvalidExternalData,
                     "'%s' has no \"model\": not a Hugging Face tokenizer.json", name_);
  static const Json kNull;
  auto member = [&](const char* key) -> const Json& {
    const auto it = root.find(key);
    return it == root.end() ? kNull : *it;
  };
  TL_RETURN_IF_ERROR(model(*model_it));
  TL_RETURN_IF_ERROR(normalizer(member("normalizer"), "normalizer"));
  TL_RETURN_IF_ERROR(pre_tokenizer(member("pre_tokenizer"), "pre_tokenizer"));
  TL_RETURN_IF_ERROR(decoder(member("decoder"), "decoder"));
  TL_RETURN_IF_ERROR(added_tokens(member("added_tokens")));
  TL_RETURN_IF_ERROR(special_ids(root, config, options));
  TL_RETURN_IF_ERROR(decoded_table());
  t_->allow_special_ = options.allow_special;
  return Error::kOk;
}

Result<std::unique_ptr<HfTokenizer>> HfTokenizer::load_from_contents(
    std::string_view tokenizer_json, const char* name, std::string_view config_json,
    const HfTokenizerOptions& options) {
  TL_ASSIGN_OR_RETURN(Json root, parse_json(tokenizer_json, name));
  Json config;
  if (!config_json.empty()) {
    const std::string config_name = std::string("tokenizer_config.json beside ") + name;
    TL_ASSIGN_OR_RETURN(config, parse_json(config_json, config_name.c_str()));
  }
  std::unique_ptr<HfTokenizer> t(new HfTokenizer());
  HfTokenizerBuilder builder(t.get(), name);
  TL_RETURN_IF_ERROR(builder.build(root, config_json.empty() ? nullptr : &config, options));
  return t;
}

Result<std::unique_ptr<HfTokenizer>> HfTokenizer::load(const std::string& path,
                                                       const HfTokenizerOptions& options) {
  TL_ASSIGN_OR_RETURN(std::string json, read_file_contents(path, kMaxTokenizerFileBytes));
  const size_t slash = path.rfind('/');
  const std::string config_path =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
      "tokenizer_config.json";
  std::string config;
  if (FILE* f = fopen(config_path.c_str(), "rb")) {
    fclose(f);
    TL_ASSIGN_OR_RETURN(config, read_file_contents(config_path, kMaxTokenizerFileBytes));
  }
  return load_from_contents(json, path.c_str(), config, options);
}

}  // namespace torchlight
