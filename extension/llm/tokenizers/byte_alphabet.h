// GPT-2's byte-level alphabet (its bytes_to_unicode()): every byte spelled
// as one printable code point, so byte-level BPE vocabularies (GPT-2,
// Llama 3, Hugging Face's ByteLevel pre-tokenizer) can be stored as text.
// Printable Latin-1 bytes stand for themselves; the other 68 bytes map to
// U+0100 upwards in byte order (a space is "Ġ", U+0120).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace torchlight {

/// Appends the alphabet spelling of `bytes` (UTF-8) to `*out`.
void bytes_to_alphabet(std::string_view bytes, std::string* out);

/// Replaces `*out` with the raw bytes `spelled` stands for. On a code point
/// outside the alphabet returns false and sets `*bad` to it.
bool alphabet_to_bytes(std::string_view spelled, std::string* out, uint32_t* bad);

/// At most `max_bytes` of `s` for an error message, control bytes (and with
/// `escape_non_ascii` every byte >= 0x7F) shown as \xHH, "..." when cut.
std::string excerpt(std::string_view s, size_t max_bytes, bool escape_non_ascii = false);

}  // namespace torchlight
