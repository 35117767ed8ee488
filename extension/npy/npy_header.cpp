#include "extension/npy/npy_header.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace torchlight {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the header so the data starts on this boundary.
constexpr size_t kArrayAlign = 64;
// numpy leaves room for the first dimension to grow to this many digits.
constexpr size_t kGrowthAxisMaxDigits = 21;

struct DtypeEntry {
  char kind;  // 'f', 'i', 'u' or 'b'.
  size_t size;
  ScalarType type;
};
constexpr DtypeEntry kDtypes[] = {
    {'f', 2, ScalarType::kHalf},   {'f', 4, ScalarType::kFloat},  {'f', 8, ScalarType::kDouble},
    {'i', 1, ScalarType::kChar},   {'i', 2, ScalarType::kShort},  {'i', 4, ScalarType::kInt},
    {'i', 8, ScalarType::kLong},   {'u', 1, ScalarType::kByte},   {'u', 2, ScalarType::kUInt16},
    {'u', 4, ScalarType::kUInt32}, {'u', 8, ScalarType::kUInt64}, {'b', 1, ScalarType::kBool},
};
constexpr const char* kSupportedDtypes = "<f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1";

Status header_error(Error code, const char* name, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
Status header_error(Error code, const char* name, const char* format, ...) {
  char reason[Status::kMaxMessage];
  va_list args;
  va_start(args, format);
  vsnprintf(reason, sizeof(reason), format, args);
  va_end(args);
  return Status::error(code, "'%s': %s", name, reason);
}

uint32_t read_le(const uint8_t* p, size_t bytes) {
  uint32_t value = 0;
  for (size_t i = bytes; i-- > 0;) value = (value << 8) | p[i];
  return value;
}

// Recursive-descent parser for the one dict shape numpy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Positions in messages count from the start of the dict text.
class DictParser {
 public:
  DictParser(const char* begin, const char* end, const char* name)
      : begin_(begin), p_(begin), end_(end), name_(name) {}

  Status parse(NpyHeader* header) {
    std::string descr;
    bool fortran_order = false;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_space();
    if (!consume('{')) return malformed("the header is not a dict: expected '{', got %s", here());
    // At most three distinct keys are accepted, so this loop runs at most
    // four times before a duplicate/unknown key or '}' ends it.
    while (true) {
      skip_space();
      if (consume('}')) break;
      std::string key;
      TL_RETURN_IF_ERROR(parse_string(&key, "a key"));
      skip_space();
      if (!consume(':')) {
        return malformed("expected ':' after key '%s', got %s", key.c_str(), here());
      }
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &have_descr;
        if (peek() == '[' || peek() == '{') {
          return header_error(Error::kNotSupported, name_,
                              "structured dtypes are not supported (supported: %s)",
                              kSupportedDtypes);
        }
        TL_RETURN_IF_ERROR(parse_string(&descr, "the 'descr' string"));
      } else if (key == "fortran_order") {
        seen = &have_fortran;
        TL_RETURN_IF_ERROR(parse_bool(&fortran_order));
      } else if (key == "shape") {
        seen = &have_shape;
        TL_RETURN_IF_ERROR(parse_shape(&header->sizes));
      } else {
        return malformed("unexpected key '%s' (expected 'descr', 'fortran_order', 'shape')",
                         key.c_str());
      }
      // Checked after parsing, but before the duplicate is used.
      if (*seen) return malformed("duplicate key '%s'", key.c_str());
      *seen = true;
      skip_space();
      if (consume(',')) continue;
      if (consume('}')) break;
      return malformed("expected ',' or '}' after the value of '%s', got %s", key.c_str(), here());
    }
    skip_space();
    if (p_ != end_) return malformed("unexpected %s after the dict", here());
    if (!have_descr) return malformed("the dict has no 'descr' key");
    if (!have_fortran) return malformed("the dict has no 'fortran_order' key");
    if (!have_shape) return malformed("the dict has no 'shape' key");
    TL_RETURN_IF_ERROR(resolve_dtype(descr, &header->type));
    if (fortran_order) {
      return header_error(Error::kNotSupported, name_,
                          "fortran_order True (column-major) arrays are not supported; save "
                          "np.ascontiguousarray(a) instead");
    }
    return Error::kOk;
  }

 private:
  Status malformed(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    char reason[Status::kMaxMessage];
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof(reason), format, args);
    va_end(args);
    return header_error(Error::kInvalidExternalData, name_,
                        "malformed .npy header at dict byte %zu: %s",
                        static_cast<size_t>(p_ - begin_), reason);
  }

  // What is at the cursor, for messages: "'x'", "byte 0x00" or "the end".
  const char* here() {
    if (p_ == end_) return "the end of the header";
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c >= 0x20 && c < 0x7f) {
      snprintf(here_, sizeof(here_), "'%c'", c);
    } else {
      snprintf(here_, sizeof(here_), "byte 0x%02x", c);
    }
    return here_;
  }

  char peek() const { return p_ != end_ ? *p_ : '\0'; }
  bool consume(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // A Python str literal in single or double quotes, without escapes.
  Status parse_string(std::string* out, const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') {
      return malformed("expected %s in quotes, got %s", what, here());
    }
    ++p_;
    const char* start = p_;
    while (p_ != end_ && *p_ != quote) {
      if (*p_ == '\\') return malformed("escape sequences in strings are not supported");
      ++p_;
    }
    if (p_ == end_) return malformed("unterminated string");
    out->assign(start, p_);
    ++p_;
    return Error::kOk;
  }

  Status parse_bool(bool* out) {
    if (consume_word("True")) {
      *out = true;
    } else if (consume_word("False")) {
      *out = false;
    } else {
      return malformed("expected True or False for 'fortran_order', got %s", here());
    }
    return Error::kOk;
  }

  bool consume_word(const char* word) {
    const size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // A tuple of non-negative ints: "()", "(3,)", "(2, 3)", "(2, 3,)".
  Status parse_shape(std::vector<SizesType>* sizes) {
    sizes->clear();
    if (!consume('(')) return malformed("expected a tuple for 'shape', got %s", here());
    skip_space();
    if (consume(')')) return Error::kOk;
    // Each iteration consumes at least one digit, so the header size bounds it.
    while (true) {
      skip_space();
      if (peek() == '-') return malformed("negative dimension in 'shape'");
      if (peek() < '0' || peek() > '9') {
        return malformed("expected a dimension in 'shape', got %s", here());
      }
      uint64_t value = 0;
      bool too_big = false;
      while (peek() >= '0' && peek() <= '9') {
        value = value * 10 + static_cast<uint64_t>(*p_ - '0');
        if (value > 0x7fffffffu) {
          too_big = true;
          value = 0x7fffffffu;  // Saturate; keep consuming digits.
        }
        ++p_;
      }
      consume('L');  // Python 2 long suffix, found in old files.
      if (too_big) {
        return header_error(Error::kNotSupported, name_,
                            "dimension %zu of 'shape' exceeds INT32_MAX, the largest size a "
                            "tensor dimension may have",
                            sizes->size());
      }
      if (sizes->size() == kMaxTensorDim) {
        return header_error(Error::kNotSupported, name_,
                            "'shape' has more than %zu dimensions, the most a tensor may have",
                            kMaxTensorDim);
      }
      sizes->push_back(static_cast<SizesType>(value));
      skip_space();
      if (consume(')')) {
        if (sizes->size() == 1) {
          // "(3)" is an int in parentheses, not a tuple: a 1-d shape has a
          // comma, and that case returns below.
          return malformed("'shape' (%d) is not a tuple; a 1-d shape is written (%d,)",
                           static_cast<int>(value), static_cast<int>(value));
        }
        return Error::kOk;
      }
      if (!consume(',')) return malformed("expected ',' or ')' in 'shape', got %s", here());
      skip_space();
      if (consume(')')) return Error::kOk;
    }
  }

  Status resolve_dtype(const std::string& descr, ScalarType* type) {
    if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=' ||
                              descr[0] == '>')) {
      const char kind = descr[1];
      const size_t size = static_cast<size_t>(descr[2] - '0');
      for (const DtypeEntry& entry : kDtypes) {
        if (entry.kind != kind || entry.size != size) continue;
        // Byte order is meaningless for 1-byte types, whatever the mark.
        if (descr[0] == '>' && size > 1) {
          return header_error(Error::kNotSupported, name_,
                              "big-endian dtype '%s' is not supported; save "
                              "a.astype('<%c%zu') instead",
                              descr.c_str(), kind, size);
        }
        *type = entry.type;
        return Error::kOk;
      }
    }
    return header_error(Error::kNotSupported, name_, "dtype '%s' is not supported (supported: %s)",
                        descr.c_str(), kSupportedDtypes);
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  const char* name_;
  char here_[24] = {};
};

}  // namespace

Result<size_t> npy_header_size(Span<const uint8_t> prefix, const char* name) {
  const size_t magic_bytes = prefix.size() < kMagicSize ? prefix.size() : kMagicSize;
  if (prefix.empty() || std::memcmp(prefix.data(), kMagic, magic_bytes) != 0) {
    return header_error(Error::kInvalidExternalData, name,
                        "not a .npy file: it does not start with the magic \"\\x93NUMPY\"");
  }
  if (prefix.size() < kMagicSize + 2) {
    return header_error(Error::kInvalidExternalData, name,
                        "truncated .npy file: %zu bytes, shorter than the magic and version",
                        prefix.size());
  }
  const uint8_t major = prefix[6];
  const uint8_t minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return header_error(Error::kNotSupported, name,
                        ".npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)",
                        major, minor);
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t fixed = kMagicSize + 2 + length_bytes;
  if (prefix.size() < fixed) {
    return header_error(Error::kInvalidExternalData, name,
                        "truncated .npy file: %zu bytes, shorter than the %zu-byte fixed header",
                        prefix.size(), fixed);
  }
  // At most 10 + 2^32 - 1 bytes: cannot wrap a 64-bit size_t.
  return fixed + read_le(prefix.data() + kMagicSize + 2, length_bytes);
}

Result<NpyHeader> parse_npy_header(Span<const uint8_t> bytes, const char* name) {
  TL_ASSIGN_OR_RETURN(const size_t header_size, npy_header_size(bytes, name));
  if (bytes.size() < header_size) {
    return header_error(Error::kInvalidExternalData, name,
                        "truncated .npy file: the header needs %zu bytes, only %zu are there",
                        header_size, bytes.size());
  }
  NpyHeader header;
  header.major_version = bytes[6];
  header.data_offset = header_size;
  const size_t dict_start = header.major_version == 1 ? 10 : 12;
  const char* text = reinterpret_cast<const char*>(bytes.data());
  DictParser parser(text + dict_start, text + header_size, name);
  TL_RETURN_IF_ERROR(parser.parse(&header));

  int64_t numel = 0;
  char shape[160];
  if (!compute_numel({header.sizes.data(), header.sizes.size()}, &numel) ||
      __builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(header.type),
                             &header.data_nbytes)) {
    return header_error(Error::kInvalidExternalData, name,
                        "shape %s of %s has more bytes than fit in memory (the size overflows)",
                        format_sizes({header.sizes.data(), header.sizes.size()}, shape,
                                     sizeof(shape)),
                        to_string(header.type));
  }
  return header;
}

Result<std::string> format_npy_header(ScalarType type, Span<const SizesType> sizes) {
  const DtypeEntry* entry = nullptr;
  for (const DtypeEntry& e : kDtypes) {
    if (e.type == type) entry = &e;
  }
  if (entry == nullptr) {
    if (type == ScalarType::kBFloat16) {
      return Status::error(Error::kNotSupported,
                           "bfloat16 has no NumPy dtype; convert the tensor to float32 before "
                           "saving it as .npy");
    }
    return Status::error(Error::kNotSupported, "dtype %s has no .npy equivalent (supported: %s)",
                         to_string(type), kSupportedDtypes);
  }
  std::string dict = "{'descr': '";
  dict += entry->size == 1 ? '|' : '<';
  dict += entry->kind;
  dict += static_cast<char>('0' + entry->size);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) dict += ',';
  dict += "), }";
  if (!sizes.empty()) {
    const size_t digits = std::to_string(sizes[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const size_t fixed = kMagicSize + 2 + 2;  // Version 1.0: a 2-byte length.
  const size_t unpadded = dict.size() + 1;  // + '\n'.
  const size_t pad = kArrayAlign - (fixed + unpadded) % kArrayAlign;
  const size_t length = unpadded + pad;
  if (length > 0xffff) {
    return Status::error(Error::kNotSupported, "a .npy 1.0 header of %zu bytes is too long",
                         length);
  }
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>(length >> 8);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

}  // namespace torchlight
