#include "extension/llm/tokenizers/sentencepiece_tokenizer.h"

#include <cmath>
#include <cstring>

#include "extension/llm/tokenizers/file_contents.h"

namespace torchlight {
namespace {

// ModelProto.SentencePiece.Type.
enum PieceType : uint8_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

constexpr std::string_view kMetaSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space
constexpr std::string_view kUnkSurface = " \xE2\x81\x87 ";  // " ⁇ ", SentencePiece's default

// Reads protobuf wire format from one message's bytes. Offsets in messages
// are from the start of the file.
class WireReader {
 public:
  WireReader(std::string_view bytes, size_t file_offset, const char* name, const char* message)
      : bytes_(bytes), base_(file_offset), name_(name), message_(message) {}

  bool done() const { return pos_ >= bytes_.size(); }
  size_t file_offset() const { return base_ + pos_; }

  Status tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t v = 0;
    TL_RETURN_IF_ERROR(varint(&v));
    *field = static_cast<uint32_t>(v >> 3);
    *wire_type = static_cast<uint32_t>(v & 7);
    if (*field == 0 || v >> 32 != 0) return fail("invalid field number");
    return Error::kOk;
  }

  Status varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return fail("truncated varint");
      const auto b = static_cast<uint8_t>(bytes_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return Error::kOk;
      }
    }
    return fail("varint longer than 10 bytes");
  }

  Status length_delimited(std::string_view* out, size_t* offset) {
    uint64_t len = 0;
    TL_RETURN_IF_ERROR(varint(&len));
    if (len > bytes_.size() - pos_) return fail("length-delimited field runs past its message");
    *offset = base_ + pos_;
    *out = bytes_.substr(pos_, static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return Error::kOk;
  }

  Status fixed32(uint32_t* out) {
    if (bytes_.size() - pos_ < 4) return fail("truncated fixed32 field");
    std::memcpy(out, bytes_.data() + pos_, 4);  // little-endian host (asserted below)
    pos_ += 4;
    return Error::kOk;
  }

  Status skip(uint32_t wire_type) {
    uint64_t v = 0;
    std::string_view s;
    size_t off = 0;
    switch (wire_type) {
      case 0:
        return varint(&v);
      case 1:
        if (bytes_.size() - pos_ < 8) return fail("truncated fixed64 field");
        pos_ += 8;
        return Error::kOk;
      case 2:
        return length_delimited(&s, &off);
      case 5:
        if (bytes_.size() - pos_ < 4) return fail("truncated fixed32 field");
        pos_ += 4;
        return Error::kOk;
      default:
        return fail("unsupported wire type (groups are not used by ModelProto)");
    }
  }

  // For a field with the wrong wire type.
  Status wrong_type(uint32_t field, uint32_t wire_type) const {
    return Status::error(Error::kInvalidExternalData,
                         "'%s': %s field %u at offset %zu has wire type %u, which does not fit "
                         "its declared type (not a SentencePiece model?)",
                         name_, message_, field, file_offset(), wire_type);
  }

 private:
  Status fail(const char* what) const {
    return Status::error(Error::kInvalidExternalData,
                         "'%s': %s at offset %zu: %s (truncated or not a SentencePiece model?)",
                         name_, message_, base_ + pos_, what);
  }

  std::string_view bytes_;
  size_t base_;
  const char* name_;
  const char* message_;
  size_t pos_ = 0;
};

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "protobuf fixed32 is little-endian");

struct RawPiece {
  std::string_view text;
  float score = 0.0f;
  uint32_t type = kNormal;
  size_t offset = 0;
};

struct Specs {
  uint64_t model_type = 1;  // UNIGRAM, proto default
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int32_t unk_id = 0;
  int32_t bos_id = 1;
  int32_t eos_id = 2;
  std::string_view normalizer_name;
  bool has_charsmap = false;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
};

Status parse_piece(std::string_view bytes, size_t offset, const char* name, RawPiece* piece) {
  WireReader r(bytes, offset, name, "SentencePiece");
  piece->offset = offset;
  while (!r.done()) {
    uint32_t field, type;
    TL_RETURN_IF_ERROR(r.tag(&field, &type));
    if (field == 1) {
      if (type != 2) return r.wrong_type(field, type);
      size_t off = 0;
      TL_RETURN_IF_ERROR(r.length_delimited(&piece->text, &off));
    } else if (field == 2) {
      if (type != 5) return r.wrong_type(field, type);
      uint32_t bits;
      TL_RETURN_IF_ERROR(r.fixed32(&bits));
      std::memcpy(&piece->score, &bits, 4);
    } else if (field == 3) {
      if (type != 0) return r.wrong_type(field, type);
      uint64_t v = 0;
      TL_RETURN_IF_ERROR(r.varint(&v));
      piece->type = static_cast<uint32_t>(v > 0xFF ? 0xFF : v);
    } else {
      TL_RETURN_IF_ERROR(r.skip(type));
    }
  }
  return Error::kOk;
}

// Reads an int32 proto field (negative values are 10-byte varints).
int32_t as_int32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

Status parse_trainer_spec(std::string_view bytes, size_t offset, const char* name, Specs* s) {
  WireReader r(bytes, offset, name, "TrainerSpec");
  while (!r.done()) {
    uint32_t field, type;
    TL_RETURN_IF_ERROR(r.tag(&field, &type));
    const bool wanted = field == 3 || field == 24 || field == 35 || field == 40 || field == 41 ||
                        field == 42;
    if (!wanted) {
      TL_RETURN_IF_ERROR(r.skip(type));
      continue;
    }
    if (type != 0) return r.wrong_type(field, type);
    uint64_t v = 0;
    TL_RETURN_IF_ERROR(r.varint(&v));
    switch (field) {
      case 3: s->model_type = v; break;
      case 24: s->treat_whitespace_as_suffix = v != 0; break;
      case 35: s->byte_fallback = v != 0; break;
      case 40: s->unk_id = as_int32(v); break;
      case 41: s->bos_id = as_int32(v); break;
      case 42: s->eos_id = as_int32(v); break;
      default: break;
    }
  }
  return Error::kOk;
}

Status parse_normalizer_spec(std::string_view bytes, size_t offset, const char* name, Specs* s) {
  WireReader r(bytes, offset, name, "NormalizerSpec");
  while (!r.done()) {
    uint32_t field, type;
    TL_RETURN_IF_ERROR(r.tag(&field, &type));
    if (field == 1 || field == 2) {
      if (type != 2) return r.wrong_type(field, type);
      std::string_view v;
      size_t off = 0;
      TL_RETURN_IF_ERROR(r.length_delimited(&v, &off));
      if (field == 1) s->normalizer_name = v;
      if (field == 2) s->has_charsmap = !v.empty();
    } else if (field == 3 || field == 4) {
      if (type != 0) return r.wrong_type(field, type);
      uint64_t v = 0;
      TL_RETURN_IF_ERROR(r.varint(&v));
      if (field == 3) s->add_dummy_prefix = v != 0;
      if (field == 4) s->remove_extra_whitespaces = v != 0;
    } else {
      TL_RETURN_IF_ERROR(r.skip(type));
    }
  }
  return Error::kOk;
}

// Replaces every U+2581 with ' '.
std::string unescape_spaces(std::string_view piece) {
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    if (piece.compare(pos, kMetaSpace.size(), kMetaSpace) == 0) {
      out.push_back(' ');
      pos += kMetaSpace.size();
    } else {
      out.push_back(piece[pos++]);
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::load(
    const std::string& path) {
  TL_ASSIGN_OR_RETURN(std::string contents, read_file_contents(path, kMaxTokenizerFileBytes));
  return load_from_contents(contents, path.c_str());
}

Result<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::load_from_contents(
    std::string_view contents, const char* name) {
  std::vector<RawPiece> pieces;
  Specs specs;
  WireReader r(contents, 0, name, "ModelProto");
  while (!r.done()) {
    uint32_t field, type;
    TL_RETURN_IF_ERROR(r.tag(&field, &type));
    if (field < 1 || field > 3) {
      TL_RETURN_IF_ERROR(r.skip(type));
      continue;
    }
    if (type != 2) return r.wrong_type(field, type);
    std::string_view bytes;
    size_t offset = 0;
    TL_RETURN_IF_ERROR(r.length_delimited(&bytes, &offset));
    if (field == 1) {
      TL_CHECK_OR_RETURN(pieces.size() < static_cast<size_t>(TokenTable::kMaxId),
                         Error::kInvalidExternalData, "'%s' has too many pieces", name);
      RawPiece p;
      TL_RETURN_IF_ERROR(parse_piece(bytes, offset, name, &p));
      pieces.push_back(p);
    } else if (field == 2) {
      TL_RETURN_IF_ERROR(parse_trainer_spec(bytes, offset, name, &specs));
    } else {
      TL_RETURN_IF_ERROR(parse_normalizer_spec(bytes, offset, name, &specs));
    }
  }

  TL_CHECK_OR_RETURN(!pieces.empty(), Error::kInvalidExternalData,
                     "'%s' has no pieces (truncated, or not a SentencePiece model?)", name);
  TL_CHECK_OR_RETURN(specs.model_type == 2, Error::kNotSupported,
                     "'%s' is a SentencePiece %s model; only BPE models are supported", name,
                     specs.model_type == 1   ? "unigram"
                     : specs.model_type == 3 ? "word"
                     : specs.model_type == 4 ? "char"
                                             : "unknown-type");
  TL_CHECK_OR_RETURN(!specs.has_charsmap, Error::kNotSupported,
                     "'%s' uses the '%.*s' normalizer (a precompiled charsmap); only identity "
                     "normalization is supported",
                     name, static_cast<int>(specs.normalizer_name.size()),
                     specs.normalizer_name.data());
  TL_CHECK_OR_RETURN(!specs.treat_whitespace_as_suffix, Error::kNotSupported,
                     "'%s' sets treat_whitespace_as_suffix, which is not supported", name);

  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const RawPiece& p = pieces[i];
    TL_CHECK_OR_RETURN(!p.text.empty(), Error::kInvalidExternalData,
                       "'%s': piece %zu at offset %zu is empty", name, i, p.offset);
    TL_CHECK_OR_RETURN(!std::isnan(p.score), Error::kInvalidExternalData,
                       "'%s': piece %zu at offset %zu has a NaN score", name, i, p.offset);
    TL_CHECK_OR_RETURN(p.type >= kNormal && p.type <= kByte, Error::kInvalidExternalData,
                       "'%s': piece %zu at offset %zu has unknown type %u", name, i, p.offset,
                       p.type);
    TL_CHECK_OR_RETURN(p.type != kUserDefined, Error::kNotSupported,
                       "'%s': piece %zu (\"%.*s\") is a user-defined symbol, which is not "
                       "supported",
                       name, i, static_cast<int>(p.text.size() > 40 ? 40 : p.text.size()),
                       p.text.data());
    t->model_.add_piece(unescape_spaces(p.text), p.score, p.type == kNormal);
    t->type_.push_back(static_cast<uint8_t>(p.type));
  }
  const int32_t n = t->model_.size();
  auto check_id = [&](int32_t id, const char* role, bool optional) -> Status {
    TL_CHECK_OR_RETURN((optional && id == -1) || (id >= 0 && id < n), Error::kInvalidExternalData,
                       "'%s': %s id %d is outside the %d pieces", name, role, id, n);
    return Error::kOk;
  };
  TL_RETURN_IF_ERROR(check_id(specs.unk_id, "unknown-piece", false));
  TL_RETURN_IF_ERROR(check_id(specs.bos_id, "BOS", true));
  TL_RETURN_IF_ERROR(check_id(specs.eos_id, "EOS", true));
  TL_CHECK_OR_RETURN(t->type_[static_cast<size_t>(specs.unk_id)] == kUnknown,
                     Error::kInvalidExternalData,
                     "'%s': unknown-piece id %d names a piece of type %u, not UNKNOWN", name,
                     specs.unk_id, t->type_[static_cast<size_t>(specs.unk_id)]);
  t->unk_id_ = specs.unk_id;
  t->bos_id_ = specs.bos_id;
  t->eos_id_ = specs.eos_id;
  t->add_dummy_prefix_ = specs.add_dummy_prefix;
  t->remove_extra_whitespaces_ = specs.remove_extra_whitespaces;
  t->model_.finish(specs.unk_id, specs.byte_fallback);
  return t;
}

void SentencePieceTokenizer::append_tokens(std::string_view text, std::vector<int32_t>* ids) const {
  // Normalization: with the identity rule only ' ' is whitespace to trim
  // and squeeze; a literal U+2581 then means a space, as it does in
  // SentencePiece after whitespace escaping.
  std::string normalized;
  normalized.reserve(text.size());
  bool pending_space = false;
  for (size_t pos = 0; pos < text.size();) {
    if (text[pos] == ' ' && remove_extra_whitespaces_) {
      pending_space = !normalized.empty();
      ++pos;
      continue;
    }
    if (pending_space) normalized.push_back(' ');
    pending_space = false;
    if (text.compare(pos, kMetaSpace.size(), kMetaSpace) == 0) {
      normalized.push_back(' ');
      pos += kMetaSpace.size();
    } else {
      normalized.push_back(text[pos++]);
    }
  }
  model_.encode(normalized, add_dummy_prefix_, ids);
}

Result<std::string_view> SentencePieceTokenizer::decode(int32_t prev, int32_t id) const {
  TL_CHECK_OR_RETURN(id >= 0 && id < model_.size(), Error::kInvalidArgument,
                     "decode: token id %d is outside the vocabulary [0, %d)", id, model_.size());
  const uint8_t type = type_[static_cast<size_t>(id)];
  if (type == kControl || type == kUnused) return std::string_view();
  if (type == kUnknown) return kUnkSurface;
  std::string_view piece = model_.decode(prev, id, /*bos_id=*/-1);
  const bool first = prev < 0 || prev >= model_.size() || type_[static_cast<size_t>(prev)] == kControl;
  if (first && add_dummy_prefix_ && type != kByte && !piece.empty() && piece[0] == ' ') {
    piece.remove_prefix(1);
  }
  return piece;
}

}  // namespace torchlight
