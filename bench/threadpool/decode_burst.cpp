// The thread pool under a decode step's call pattern: stories15m's ~50
// parallel_for calls a token (six layers of 2-11 us linears and attention,
// then a 300 us classifier), a serial gap between tokens (sampling), each
// chunk pure arithmetic so memory bandwidth plays no part. Prints the wall
// time per token on 1 and 2 threads, the 2-thread speed-up, and what the
// pool cost per call: (2-thread time - the ideal, half the split work plus
// the serial part) / calls.
//
//   ./torchlight exec build/release/bench/threadpool/torchlight_decode_burst [tokens] [rounds]
//
// Run a `taskset -c 1 yes > /dev/null` beside it for a machine with a core
// taken: the 2-thread time should then stay near the 1-thread time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "extension/threadpool/threadpool.h"

namespace {

using Clock = std::chrono::steady_clock;

// Busy arithmetic, `iterations` dependent multiply-adds.
double spin_work(size_t iterations) {
  double x = 1.0;
  for (size_t i = 0; i < iterations; ++i) {
    x = x * 0.999999 + 1e-7;
    asm volatile("" : "+x"(x));
  }
  return x;
}

double g_sink = 0;
double ns_per_iteration = 1.0;

size_t iterations_for_us(double us) { return static_cast<size_t>(us * 1000.0 / ns_per_iteration); }

void calibrate() {
  const size_t n = 1 << 22;
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    g_sink += spin_work(n);
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  ns_per_iteration = best / static_cast<double>(n);
}

// One parallel_for of `us` microseconds of work over `items` items (the
// linears' 16-column blocks, attention's heads).
struct Call {
  double us;
  size_t items;
};

void run_call(const Call& call) {
  const size_t per_item = iterations_for_us(call.us / static_cast<double>(call.items));
  torchlight::threadpool::parallel_for(call.items, 1, [&](size_t begin, size_t end) {
    g_sink += spin_work(per_item * (end - begin));
  });
}

// stories15m 8da4w decode at 1 thread, roughly: per layer wq/wk/wv (288 x
// 288: 18 blocks), attention (6 heads), wo, w1/w3 (288 x 768: 48 blocks),
// w2 (768 x 288); then the classifier (288 x 32000: 2000 blocks).
std::vector<Call> token_calls() {
  std::vector<Call> calls;
  for (int layer = 0; layer < 6; ++layer) {
    for (int i = 0; i < 3; ++i) calls.push_back({3.0, 18});
    calls.push_back({11.0, 6});
    calls.push_back({3.0, 18});
    for (int i = 0; i < 2; ++i) calls.push_back({8.0, 48});
    calls.push_back({5.0, 18});
  }
  calls.push_back({300.0, 2000});
  return calls;
}

constexpr double kSerialPerCallUs = 0.5;  // norms, rope, copies between calls
constexpr double kGapUs = 20.0;           // sampling and the runner between tokens

double token_us(const std::vector<Call>& calls) {
  const auto start = Clock::now();
  for (const Call& call : calls) {
    run_call(call);
    g_sink += spin_work(iterations_for_us(kSerialPerCallUs));
  }
  g_sink += spin_work(iterations_for_us(kGapUs));
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int tokens = argc > 1 ? std::atoi(argv[1]) : 400;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  calibrate();
  const std::vector<Call> calls = token_calls();
  double split_us = 0;
  for (const Call& call : calls) split_us += call.us;
  const double serial_us = kSerialPerCallUs * static_cast<double>(calls.size()) + kGapUs;
  std::printf("%zu calls a token, %.0f us split work + %.0f us serial; %d tokens a round\n",
              calls.size(), split_us, serial_us, tokens);
  std::printf("| round | 1 thread us/token | 2 threads us/token (p10, p90) | speed-up | pool cost us/call | stalls |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (int round = 0; round < rounds; ++round) {
    double medians[2], p10 = 0, p90 = 0;
    uint64_t stalls = 0;
    for (int t = 0; t < 2; ++t) {
      torchlight::threadpool::set_num_threads(static_cast<size_t>(t + 1));
      std::vector<double> us;
      for (int i = 0; i < tokens; ++i) us.push_back(token_us(calls));
      medians[t] = quantile(us, 0.5);
      p10 = quantile(us, 0.1);
      p90 = quantile(us, 0.9);
      stalls = torchlight::threadpool::stalls();
    }
    // Half the split work plus the serial part, scaled to the measured
    // 1-thread time (the clock moves between calibration and rounds).
    const double ideal = medians[0] * (split_us / 2 + serial_us) / (split_us + serial_us);
    std::printf("| %d | %.1f | %.1f (%.1f, %.1f) | %.2fx | %.2f | %llu |\n", round + 1, medians[0],
                medians[1], p10, p90,
                medians[0] / medians[1], (medians[1] - ideal) / static_cast<double>(calls.size()),
                static_cast<unsigned long long>(stalls));
  }
  return g_sink == 12345.0 ? 1 : 0;
}
