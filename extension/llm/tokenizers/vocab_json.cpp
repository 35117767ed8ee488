#include "extension/llm/tokenizers/vocab_json.h"

#include <unordered_set>

#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

class Parser {
 public:
  Parser(std::string_view json, const char* name) : s_(json), name_(name) {}

  Result<std::vector<VocabJsonEntry>> parse() {
    std::vector<VocabJsonEntry> out;
    skip_ws();
    if (!consume('{')) return fail("expected '{' starting the vocabulary object");
    skip_ws();
    std::unordered_set<std::string_view> seen;
    if (!consume('}')) {
      while (true) {
        skip_ws();
        VocabJsonEntry e;
        TL_RETURN_IF_ERROR(parse_string(&e.key));
        skip_ws();
        if (!consume(':')) return fail("expected ':' after a key");
        skip_ws();
        TL_RETURN_IF_ERROR(parse_id(&e.id));
        out.push_back(std::move(e));
        skip_ws();
        if (consume('}')) break;
        if (!consume(',')) return fail("expected ',' or '}' after a value");
      }
      seen.reserve(out.size());
      for (size_t i = 0; i < out.size(); ++i) {
        if (!seen.insert(out[i].key).second) {
          return Status::error(Error::kInvalidExternalData,
                               "'%s': key %zu (\"%.60s\") appears twice", name_, i,
                               out[i].key.c_str());
        }
      }
    }
    skip_ws();
    if (pos_ != s_.size()) return fail("unexpected data after the vocabulary object");
    return out;
  }

 private:
  bool consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  Status fail(const char* what) const {
    size_t line = 1;
    size_t col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    if (pos_ >= s_.size()) {
      return Status::error(Error::kInvalidExternalData,
                           "'%s': %s, but the file ends at line %zu column %zu (truncated?)",
                           name_, what, line, col);
    }
    return Status::error(Error::kInvalidExternalData, "'%s' line %zu column %zu: %s", name_, line,
                         col, what);
  }

  Status parse_hex4(uint32_t* out) {
    if (s_.size() - pos_ < 4) {
      pos_ = s_.size();
      return fail("expected 4 hex digits after \\u");
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_];
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return fail("expected 4 hex digits after \\u");
      }
      v = v * 16 + d;
      ++pos_;
    }
    *out = v;
    return Error::kOk;
  }

  Status parse_string(std::string* out) {
    if (!consume('"')) return fail("expected '\"' starting a key");
    while (true) {
      if (pos_ >= s_.size()) return fail("unterminated string");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return Error::kOk;
      }
      if (static_cast<uint8_t>(c) < 0x20) return fail("raw control character in a string");
      if (c != '\\') {
        const Utf8Char u = decode_utf8(s_, pos_);
        if (u.code_point == kInvalidCodePoint) return fail("invalid UTF-8 in a string");
        out->append(s_.data() + pos_, u.size);
        pos_ += u.size;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          TL_RETURN_IF_ERROR(parse_hex4(&cp));
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!(consume('\\') && consume('u'))) {
              return fail("high surrogate \\u escape not followed by a low one");
            }
            uint32_t low = 0;
            TL_RETURN_IF_ERROR(parse_hex4(&low));
            if (low < 0xDC00 || low > 0xDFFF) {
              return fail("high surrogate \\u escape not followed by a low one");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          char buf[4];
          out->append(buf, encode_utf8(cp, buf));
          break;
        }
        default:
          --pos_;
          return fail("unknown escape");
      }
    }
  }

  Status parse_id(int32_t* out) {
    if (pos_ < s_.size() && s_[pos_] == '-') return fail("negative token id");
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + (s_[pos_] - '0');
      if (v > INT32_MAX) return fail("token id does not fit in 31 bits");
      ++pos_;
    }
    if (pos_ == start) return fail("expected an integer token id");
    if (pos_ - start > 1 && s_[start] == '0') {
      pos_ = start;
      return fail("token id with a leading zero");
    }
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) {
      return fail("token id is not an integer");
    }
    *out = static_cast<int32_t>(v);
    return Error::kOk;
  }

  std::string_view s_;
  const char* name_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<VocabJsonEntry>> parse_vocab_json(std::string_view json, const char* name) {
  return Parser(json, name).parse();
}

}  // namespace torchlight
