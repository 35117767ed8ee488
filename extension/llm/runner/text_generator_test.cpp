#include "extension/llm/runner/text_generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "extension/llm/tokenizers/byte_tokenizer.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

constexpr int32_t kBos = 256;
constexpr int32_t kEos = 257;

// A scripted model: its "cache" is the list of tokens fed so far, and the
// next token is whatever `next` says for that list. Every call is recorded,
// and calls that a real KV cache could not serve (a start position past
// what was fed, positions past the context) fail, so the tests see how the
// generator drives a model.
class FakeDecoder final : public DecoderStep {
 public:
  using NextFn = std::function<int32_t(const std::vector<int64_t>& cache)>;
  struct Call {
    int64_t start_pos;
    std::vector<int64_t> tokens;
  };

  FakeDecoder(int64_t max_seq_len, int64_t max_step, int32_t vocab, NextFn next)
      : max_seq_len_(max_seq_len), max_step_(max_step), vocab_(vocab), next_(std::move(next)),
        logits_(static_cast<size_t>(vocab)) {}

  Result<Span<const float>> run(Span<const int64_t> tokens, int64_t start_pos) override {
    const auto n = static_cast<int64_t>(tokens.size());
    calls.push_back({start_pos, std::vector<int64_t>(tokens.begin(), tokens.end())});
    TL_CHECK_OR_RETURN(n >= 1 && n <= max_step_, Error::kInvalidArgument, "bad step size %lld",
                       static_cast<long long>(n));
    TL_CHECK_OR_RETURN(start_pos >= 0 && start_pos <= static_cast<int64_t>(cache.size()) &&
                           start_pos + n <= max_seq_len_,
                       Error::kInvalidArgument, "bad start_pos %lld",
                       static_cast<long long>(start_pos));
    TL_CHECK_OR_RETURN(fail_at_call < 0 || static_cast<int64_t>(calls.size()) < fail_at_call,
                       Error::kOperatorMissing, "scripted failure");
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    cache.resize(static_cast<size_t>(start_pos));
    cache.insert(cache.end(), tokens.begin(), tokens.end());
    std::fill(logits_.begin(), logits_.end(), 0.0f);
    logits_[static_cast<size_t>(next_(cache))] = 10.0f;
    return Span<const float>(logits_.data(), logits_.size());
  }
  int64_t max_seq_len() const override { return max_seq_len_; }
  int64_t max_tokens_per_step() const override { return max_step_; }
  int32_t vocab_size() const override { return vocab_; }

  std::vector<Call> calls;
  std::vector<int64_t> cache;
  int sleep_ms = 0;
  int64_t fail_at_call = -1;  // 1-based call that fails; -1: none

 private:
  int64_t max_seq_len_;
  int64_t max_step_;
  int32_t vocab_;
  NextFn next_;
  std::vector<float> logits_;
};

// After the first `prompt_len` tokens, the model says `script` (then EOS),
// whatever the prompt was.
FakeDecoder::NextFn says(const std::string& script, size_t prompt_len) {
  return [script, prompt_len](const std::vector<int64_t>& cache) -> int32_t {
    const size_t i = cache.size() - prompt_len;
    return i < script.size() ? static_cast<unsigned char>(script[i]) : kEos;
  };
}

// Generates forever: 'a', 'b', 'c', ... by position.
int32_t alphabet(const std::vector<int64_t>& cache) {
  return 'a' + static_cast<int32_t>(cache.size() % 26);
}

std::unique_ptr<ByteTokenizer> bytes_with_specials() {
  auto t = ByteTokenizer::create({kBos, kEos});
  EXPECT_TRUE(t.ok());
  return std::move(t.get());
}

std::unique_ptr<TextGenerator> make_generator(DecoderStep* decoder, const Tokenizer* tokenizer,
                                              const TextGeneratorOptions& options = {}) {
  auto g = TextGenerator::create(decoder, tokenizer, options);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(g.get()) : nullptr;
}

GenerationConfig greedy(int64_t max_new_tokens = -1, std::vector<std::string> stops = {}) {
  GenerationConfig config;
  config.max_new_tokens = max_new_tokens;
  config.sampler.temperature = 0.0f;
  config.stop_strings = std::move(stops);
  return config;
}

// Collects the streamed events.
struct Transcript {
  std::string text;
  std::vector<int32_t> tokens;  // Generated ids, without the final -1.
  int final_events = 0;
  TokenCallback callback() {
    return [this](const TokenEvent& e) {
      text += std::string(e.text);
      if (e.token >= 0) tokens.push_back(e.token);
      else ++final_events;
    };
  }
};

// A model claiming a context of INT32_MAX tokens (a few bytes of metadata)
// used to make the generator reserve gigabytes and abort on bad_alloc.
TEST(TextGeneratorTest, HugeContextOrVocabularyIsRefused) {
  auto tok = bytes_with_specials();
  FakeDecoder huge_context(INT32_MAX, 1, 258, alphabet);
  auto g = TextGenerator::create(&huge_context, tok.get(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g, ErrorIs(Error::kNotSupported, "context of 2147483647 tokens"));
  FakeDecoder huge_vocab(64, 1, static_cast<int32_t>(kMaxLlmContext + 1), alphabet);
  EXPECT_THAT(TextGenerator::create(&huge_vocab, tok.get(), {}),
              ErrorIs(Error::kNotSupported, "this runner supports at most 4194304 of each"));
  FakeDecoder at_limit(kMaxLlmContext, 1, 258, alphabet);
  EXPECT_TRUE(TextGenerator::create(&at_limit, tok.get(), {}).ok());
}

TEST(TextGeneratorTest, PrefillsOnceThenDecodesAndStopsOnEos) {
  auto tok = bytes_with_specials();
  FakeDecoder model(64, 64, 258, says("Hi!", 3));  // BOS + "ab"
  auto gen = make_generator(&model, tok.get());
  Transcript out;
  auto stats = gen->generate("ab", greedy(), out.callback());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(out.text, "Hi!");
  EXPECT_EQ(out.tokens, (std::vector<int32_t>{'H', 'i', '!', kEos}));
  EXPECT_EQ(stats->stop_reason, StopReason::kEos);
  EXPECT_EQ(stats->eos_id, kEos);
  EXPECT_EQ(stats->prompt_ids, (std::vector<int32_t>{kBos, 'a', 'b'}));
  EXPECT_EQ(stats->prompt_tokens, 3);
  EXPECT_EQ(stats->generated_tokens, 4);
  EXPECT_EQ(stats->position, 7);
  // One prefill call with the whole prompt, then one call per fed token.
  ASSERT_EQ(model.calls.size(), 4u);
  EXPECT_EQ(model.calls[0].start_pos, 0);
  EXPECT_EQ(model.calls[0].tokens, (std::vector<int64_t>{kBos, 'a', 'b'}));
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(model.calls[i].start_pos, static_cast<int64_t>(2 + i));
    EXPECT_EQ(model.calls[i].tokens.size(), 1u);
  }
  EXPECT_EQ(model.calls[3].tokens[0], '!');
}

TEST(TextGeneratorTest, IdsWithoutATokenizerAreFedAsGivenAndYieldIds) {
  FakeDecoder model(32, 4, 300, says("xyz", 6));
  TextGeneratorOptions options;
  options.eos_ids = {kEos};
  auto gen = make_generator(&model, nullptr, options);
  ASSERT_NE(gen, nullptr);
  const int32_t ids[] = {1, 290, 3, 4, 5, 6};  // no BOS added; chunked by the step of 4
  std::vector<int32_t> seen;
  auto stats = gen->generate_from_ids(Span<const int32_t>(ids), greedy(),
                                      [&seen](const TokenEvent& e) {
                                        EXPECT_TRUE(e.text.empty());
                                        if (e.token >= 0) seen.push_back(e.token);
                                      });
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->prompt_ids, std::vector<int32_t>(std::begin(ids), std::end(ids)));
  EXPECT_EQ(seen, (std::vector<int32_t>{'x', 'y', 'z', kEos}));
  EXPECT_EQ(stats->stop_reason, StopReason::kEos);
  ASSERT_GE(model.calls.size(), 2u);
  EXPECT_EQ(model.calls[0].tokens, (std::vector<int64_t>{1, 290, 3, 4}));

  const int32_t outside[] = {1, 300};
  EXPECT_THAT(gen->generate_from_ids(Span<const int32_t>(outside), greedy(), nullptr),
              ErrorIs(Error::kInvalidArgument, "prompt token 1 is 300, outside"));
  EXPECT_THAT(gen->generate("text", greedy(), nullptr),
              ErrorIs(Error::kInvalidArgument, "need a tokenizer"));
}

TEST(TextGeneratorTest, LongPromptIsPrefilledInChunksOfTheStepSize) {
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(32, 4, 256, alphabet);
  auto gen = make_generator(&model, tok->get());
  auto stats = gen->generate("0123456789", greedy(1), nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(model.calls.size(), 3u);
  EXPECT_EQ(model.calls[0].start_pos, 0);
  EXPECT_EQ(model.calls[0].tokens.size(), 4u);
  EXPECT_EQ(model.calls[1].start_pos, 4);
  EXPECT_EQ(model.calls[2].start_pos, 8);
  EXPECT_EQ(model.calls[2].tokens.size(), 2u);
  EXPECT_EQ(stats->prompt_tokens, 10);
  EXPECT_EQ(stats->stop_reason, StopReason::kMaxNewTokens);
}

TEST(TextGeneratorTest, EndOfContextStopsAfterTheTokenThatFillsIt) {
  // As torchlight.llm.generate: the token sampled from the last position's
  // logits is emitted, then generation stops without feeding it.
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(8, 8, 256, alphabet);
  auto gen = make_generator(&model, tok->get());
  Transcript out;
  auto stats = gen->generate("01234", greedy(), out.callback());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->stop_reason, StopReason::kEndOfContext);
  EXPECT_EQ(stats->generated_tokens, 8 - 5 + 1);
  EXPECT_EQ(out.text, "fghi");  // alphabet at cache sizes 5, 6, 7, 8
  EXPECT_EQ(model.calls.back().start_pos, 7);
  EXPECT_EQ(model.cache.size(), 8u);
}

TEST(TextGeneratorTest, PromptThatFillsTheContextGivesOneToken) {
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(4, 4, 256, alphabet);
  auto gen = make_generator(&model, tok->get());
  auto stats = gen->generate("wxyz", greedy(), nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->generated_tokens, 1);
  EXPECT_EQ(stats->stop_reason, StopReason::kEndOfContext);
  EXPECT_EQ(model.calls.size(), 1u);
}

TEST(TextGeneratorTest, PromptLongerThanTheContextIsAnErrorBeforeAnyCall) {
  auto tok = bytes_with_specials();
  FakeDecoder model(4, 4, 258, alphabet);
  auto gen = make_generator(&model, tok.get());
  auto stats = gen->generate("abcd", greedy(), nullptr);  // 5 tokens with BOS
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(stats, ErrorIs(Error::kInvalidArgument, "5 tokens"));
  EXPECT_NE(std::string(stats.status().message()).find("4 positions"), std::string::npos);
  EXPECT_TRUE(model.calls.empty());
}

TEST(TextGeneratorTest, MaxNewTokensLimitsAndZeroOnlyPrefills) {
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(64, 64, 256, alphabet);
  auto gen = make_generator(&model, tok->get());
  Transcript out;
  auto stats = gen->generate("ab", greedy(3), out.callback());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->generated_tokens, 3);
  EXPECT_EQ(out.text, "cde");
  EXPECT_EQ(stats->stop_reason, StopReason::kMaxNewTokens);

  model.calls.clear();
  auto none = gen->generate("ab", greedy(0), nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->generated_tokens, 0);
  EXPECT_EQ(none->time_to_first_token_ms, 0.0);
  EXPECT_EQ(model.calls.size(), 1u);
}

TEST(TextGeneratorTest, StopStringSpanningTokensEndsGenerationUnprinted) {
  auto tok = bytes_with_specials();
  FakeDecoder model(64, 64, 258, says("one\n\ntwo", 2));
  auto gen = make_generator(&model, tok.get());
  Transcript out;
  auto stats = gen->generate("x", greedy(-1, {"zzz", "\n\n"}), out.callback());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(out.text, "one");
  EXPECT_EQ(stats->stop_reason, StopReason::kStopString);
  EXPECT_EQ(stats->stop_string, 1);
  EXPECT_EQ(stats->generated_tokens, 5);  // o n e \n \n
}

TEST(TextGeneratorTest, UnfinishedStopPrefixIsFlushedAtTheEnd) {
  auto tok = bytes_with_specials();
  FakeDecoder model(64, 64, 258, says("ok\n", 2));
  auto gen = make_generator(&model, tok.get());
  Transcript out;
  auto stats = gen->generate("x", greedy(-1, {"\n\n"}), out.callback());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->stop_reason, StopReason::kEos);
  EXPECT_EQ(out.text, "ok\n");
  EXPECT_EQ(out.final_events, 1);  // The held "\n" came with token -1.
}

TEST(TextGeneratorTest, HoldsIncompleteUtf8AndReplacesATruncatedTail) {
  auto tok = bytes_with_specials();
  FakeDecoder model(64, 64, 258, says("\xC3\xA9\xE2\x82", 2));  // é, then half of €
  auto gen = make_generator(&model, tok.get());
  std::vector<std::string> events;
  auto stats = gen->generate("x", greedy(), [&](const TokenEvent& e) {
    events.emplace_back(e.text);
  });
  ASSERT_TRUE(stats.ok());
  // C3: held; A9: é; E2, 82: held; EOS: nothing; final: U+FFFD.
  EXPECT_EQ(events, (std::vector<std::string>{"", "\xC3\xA9", "", "", "", "\xEF\xBF\xBD"}));
}

TEST(TextGeneratorTest, ChatTurnsContinueTheCacheWithoutReprefilling) {
  auto tok = bytes_with_specials();
  // Replies "ok\n" after each user turn: the reply restarts whenever the
  // last fed token is a user's '?'.
  auto next = [](const std::vector<int64_t>& cache) -> int32_t {
    size_t since = 0;
    while (since < cache.size() && cache[cache.size() - 1 - since] != '?') ++since;
    const std::string reply = "ok\n";
    return since < reply.size() ? static_cast<unsigned char>(reply[since]) : 'z';
  };
  FakeDecoder model(64, 64, 258, next);
  auto gen = make_generator(&model, tok.get());
  const GenerationConfig config = greedy(-1, {"\n"});

  Transcript first;
  auto one = gen->continue_conversation("hi?", config, first.callback());
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(first.text, "ok");
  EXPECT_EQ(one->prompt_tokens, 4);  // BOS h i ?
  EXPECT_EQ(one->position, 7);       // ... o k \n (the '\n' not yet fed)
  EXPECT_EQ(model.cache.size(), 6u);

  const size_t calls_before = model.calls.size();
  Transcript second;
  auto two = gen->continue_conversation("yo?", config, second.callback());
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(second.text, "ok");
  EXPECT_EQ(two->prompt_ids, (std::vector<int32_t>{'y', 'o', '?'}));  // no second BOS
  EXPECT_EQ(two->prompt_tokens, 4);  // the pending '\n' + "yo?"
  // The second turn starts where the first left off: nothing is re-fed.
  ASSERT_GT(model.calls.size(), calls_before);
  EXPECT_EQ(model.calls[calls_before].start_pos, 6);
  EXPECT_EQ(model.calls[calls_before].tokens, (std::vector<int64_t>{'\n', 'y', 'o', '?'}));
  for (size_t i = calls_before; i < model.calls.size(); ++i) EXPECT_GE(model.calls[i].start_pos, 6);
  const std::vector<int32_t> expected = {kBos, 'h', 'i', '?', 'o', 'k', '\n',
                                         'y', 'o', '?', 'o', 'k', '\n'};
  EXPECT_EQ(gen->history(), expected);

  // generate() starts over at position 0.
  auto fresh = gen->generate("a?", config, nullptr);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->position, 6);
}

TEST(TextGeneratorTest, ChatTurnThatDoesNotFitIsOutOfResourcesAndResets) {
  auto tok = bytes_with_specials();
  FakeDecoder model(8, 8, 258, says("ab", 3));
  auto gen = make_generator(&model, tok.get());
  auto one = gen->continue_conversation("xy", greedy(), nullptr);  // BOS x y a b EOS
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(gen->position(), 6);
  auto two = gen->continue_conversation("long", greedy(), nullptr);
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two,
              ErrorIs(Error::kOutOfResources, "the conversation holds 6 of 8 positions; 4 more"));
  EXPECT_EQ(gen->position(), 0);
}

TEST(TextGeneratorTest, StatsAreConsistent) {
  auto tok = bytes_with_specials();
  FakeDecoder model(64, 64, 258, says("abcdef", 4));
  model.sleep_ms = 2;
  auto gen = make_generator(&model, tok.get());
  auto stats = gen->generate("xyz", greedy(), nullptr);
  ASSERT_TRUE(stats.ok());
  const GenerationStats& s = stats.get();
  EXPECT_EQ(s.generated_tokens, 7);  // abcdef + EOS
  EXPECT_GE(s.prefill_ms, 2.0);
  EXPECT_GE(s.time_to_first_token_ms, s.prefill_ms);
  EXPECT_GE(s.decode_ms, 6 * 2.0);  // six decode steps after the first token
  EXPECT_GE(s.total_ms, s.time_to_first_token_ms + s.decode_ms - 1e-6);
  EXPECT_DOUBLE_EQ(s.prefill_tokens_per_second(), 4 * 1000.0 / s.prefill_ms);
  EXPECT_DOUBLE_EQ(s.decode_tokens_per_second(), 6 * 1000.0 / s.decode_ms);
  EXPECT_EQ(s.max_seq_len, 64);
}

TEST(TextGeneratorTest, RejectsATokenizerLargerThanTheModel) {
  auto tok = bytes_with_specials();  // 258 tokens
  FakeDecoder model(16, 16, 100, alphabet);
  auto gen = TextGenerator::create(&model, tok.get());
  ASSERT_FALSE(gen.ok());
  EXPECT_THAT(gen, ErrorIs(Error::kInvalidArgument));
  const std::string message = gen.status().message();
  EXPECT_NE(message.find("258"), std::string::npos) << message;
  EXPECT_NE(message.find("100"), std::string::npos) << message;
}

TEST(TextGeneratorTest, TokenTheTokenizerCannotDecodeIsAnError) {
  auto tok = ByteTokenizer::create();  // 256 tokens; the model has 300
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(16, 16, 300, [](const std::vector<int64_t>&) { return 299; });
  auto gen = make_generator(&model, tok->get());
  auto stats = gen->generate("a", greedy(), nullptr);
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(stats, ErrorIs(Error::kInvalidArgument, "299"));
}

TEST(TextGeneratorTest, ExtraEosIdsAndBosOverride) {
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  FakeDecoder model(32, 32, 256, says("ab.cd", 3));
  TextGeneratorOptions options;
  options.bos_id = 1;
  options.eos_ids = {'.'};
  auto gen = make_generator(&model, tok->get(), options);
  Transcript out;
  auto stats = gen->generate("xy", greedy(), out.callback());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->prompt_ids, (std::vector<int32_t>{1, 'x', 'y'}));
  EXPECT_EQ(stats->stop_reason, StopReason::kEos);
  EXPECT_EQ(stats->eos_id, '.');
  EXPECT_EQ(out.text, "ab");

  GenerationConfig ignoring = greedy(4);
  ignoring.ignore_eos = true;
  Transcript all;
  auto ignored = gen->generate("xy", ignoring, all.callback());
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ(ignored->stop_reason, StopReason::kMaxNewTokens);
  EXPECT_EQ(all.text, "ab.c");

  options.bos_id = 256;  // outside the model's vocabulary
  EXPECT_THAT(TextGenerator::create(&model, tok->get(), options),
              ErrorIs(Error::kInvalidArgument,
                      "BOS id 256 is outside the model's vocabulary of 256"));
}

TEST(TextGeneratorTest, EmptyPromptNeedsABos) {
  auto plain = ByteTokenizer::create();
  ASSERT_TRUE(plain.ok());
  FakeDecoder model(16, 16, 258, alphabet);
  auto gen = make_generator(&model, plain->get());
  EXPECT_THAT(gen->generate("", greedy(2), nullptr),
              ErrorIs(Error::kInvalidArgument, "the prompt is empty and the model has no BOS"));

  auto tok = bytes_with_specials();
  auto with_bos = make_generator(&model, tok.get());
  auto stats = with_bos->generate("", greedy(2), nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->prompt_ids, (std::vector<int32_t>{kBos}));
}

TEST(TextGeneratorTest, BadConfigAndDecoderFailuresAreErrors) {
  auto tok = bytes_with_specials();
  FakeDecoder model(16, 16, 258, alphabet);
  auto gen = make_generator(&model, tok.get());
  EXPECT_THAT(gen->generate("a", greedy(-1, {""}), nullptr),
              ErrorIs(Error::kInvalidArgument, "a stop string must not be empty"));
  GenerationConfig bad = greedy();
  bad.sampler.top_p = 0.0f;
  EXPECT_THAT(gen->generate("a", bad, nullptr),
              ErrorIs(Error::kInvalidArgument, "top_p is 0; expected a value in (0, 1]"));

  model.fail_at_call = 3;  // prefill and one decode step succeed
  auto stats = gen->generate("a", greedy(), nullptr);
  ASSERT_FALSE(stats.ok());
  EXPECT_THAT(stats, ErrorIs(Error::kOperatorMissing, "scripted failure"));
  EXPECT_EQ(gen->position(), 0);
}

TEST(TextGeneratorTest, SamplingIsReproducibleForASeed) {
  auto tok = ByteTokenizer::create();
  ASSERT_TRUE(tok.ok());
  // Flat logits: every token equally likely, so the seed decides.
  class Flat final : public DecoderStep {
   public:
    Result<Span<const float>> run(Span<const int64_t>, int64_t) override {
      return Span<const float>(logits_.data(), logits_.size());
    }
    int64_t max_seq_len() const override { return 64; }
    int64_t max_tokens_per_step() const override { return 64; }
    int32_t vocab_size() const override { return 256; }

   private:
    std::vector<float> logits_ = std::vector<float>(256, 0.0f);
  } flat;
  auto gen = make_generator(&flat, tok->get());
  auto run = [&](uint64_t seed) {
    GenerationConfig config;
    config.max_new_tokens = 20;
    config.sampler.temperature = 1.0f;
    config.sampler.seed = seed;
    Transcript out;
    EXPECT_TRUE(gen->generate("a", config, out.callback()).ok());
    return out.tokens;
  };
  const std::vector<int32_t> a = run(7);
  EXPECT_EQ(a.size(), 20u);
  EXPECT_EQ(run(7), a);
  EXPECT_NE(run(8), a);
}

}  // namespace
}  // namespace torchlight
