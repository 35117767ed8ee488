#include "kernels/optimized/gemm/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__linux__) && defined(TL_GEMM_HAVE_X86_KERNELS)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm_amx_kernels.h"
#include "kernels/optimized/gemm/gemm_kernels.h"
#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace torchlight::optimized {

using internal::AmxGemmKernels;
using internal::AmxNtBlock;
using internal::Epilogue;
using internal::GemmKernels;

namespace {

// ---------------------------------------------------------------------------
// Instruction set selection.

const GemmKernels* kernels_of(GemmIsa isa) {
  switch (isa) {
#if defined(TL_GEMM_HAVE_X86_KERNELS)
    case GemmIsa::kAmx:  // Everything but the AMX path itself.
    case GemmIsa::kAvx512: return internal::avx512_gemm_kernels();
    case GemmIsa::kAvx2: return internal::avx2_gemm_kernels();
#endif
    case GemmIsa::kPortable: return internal::portable_gemm_kernels();
    default: return nullptr;
  }
}

const AmxGemmKernels* amx_kernels() {
#if defined(TL_GEMM_HAVE_X86_KERNELS)
  return internal::amx_gemm_kernels();
#else
  return nullptr;
#endif
}

// TORCHLIGHT_GEMM_ISA's cap (read once): the highest set to use.
GemmIsa isa_cap() {
  static const GemmIsa cap = [] {
    const char* env = std::getenv("TORCHLIGHT_GEMM_ISA");
    if (env == nullptr || *env == '\0') return GemmIsa::kAmx;
    for (GemmIsa isa : {GemmIsa::kPortable, GemmIsa::kAvx2, GemmIsa::kAvx512, GemmIsa::kAmx}) {
      if (std::strcmp(env, to_string(isa)) == 0) return isa;
    }
    TL_LOG(kTlLogWarning, "TORCHLIGHT_GEMM_ISA is '%s', expected portable, avx2, avx512 or amx; ignored",
           env);
    return GemmIsa::kAmx;
  }();
  return cap;
}

GemmIsa best_isa() {
  for (GemmIsa isa : {GemmIsa::kAmx, GemmIsa::kAvx512, GemmIsa::kAvx2}) {
    if (static_cast<int>(isa) <= static_cast<int>(isa_cap()) && gemm_isa_supported(isa)) {
      return isa;
    }
  }
  return GemmIsa::kPortable;
}

#if defined(TL_GEMM_HAVE_X86_KERNELS) && defined(__linux__)
// Linux hands out the AMX tile state (8 KiB per thread) only on request;
// the grant covers every thread of the process.
bool amx_granted() {
  static const bool granted = [] {
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
}
#endif

// -1 until first use; then the GemmIsa in force.
std::atomic<int> g_active_isa{-1};

GemmIsa current_isa() {
  int isa = g_active_isa.load(std::memory_order_acquire);
  if (isa < 0) {
    isa = static_cast<int>(best_isa());
    g_active_isa.store(isa, std::memory_order_release);
  }
  return static_cast<GemmIsa>(isa);
}

// ---------------------------------------------------------------------------
// Packing memory: the caller's workspace, one slot per task running at once.
// A task claims a free slot for its whole block and releases it after, so
// no buffer is allocated, and none is tied to a thread.

class SlotClaims {
 public:
  explicit SlotClaims(const GemmWorkspace& workspace) : workspace_(workspace) {}

  // A free slot's memory, or null when every slot is taken (the split below
  // never runs more tasks at once than there are slots).
  float* claim(size_t* slot) {
    for (size_t i = 0; i < workspace_.slots; ++i) {
      const uint64_t bit = uint64_t{1} << i;
      if ((in_use_.fetch_or(bit, std::memory_order_acquire) & bit) == 0) {
        *slot = i;
        return workspace_.data + i * workspace_.slot_floats;
      }
    }
    return nullptr;
  }
  void release(size_t slot) { in_use_.fetch_and(~(uint64_t{1} << slot), std::memory_order_release); }

 private:
  const GemmWorkspace& workspace_;
  std::atomic<uint64_t> in_use_{0};
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// Work below these sizes stays on one thread: waking a pool thread costs
// microseconds on an idle machine (and up to a scheduler tick on a busy
// one), more than splitting smaller work saves.
constexpr int64_t kMinParallelMacs = int64_t{1} << 21;  // Compute-bound paths.
constexpr int64_t kMinChunkFloats = int64_t{1} << 18;   // Memory-bound: 1 MB a chunk.
// A clamp pass over C (the non-AMX paths'): conv2d's chunk before it moved here.
constexpr int64_t kMinClampChunkFloats = int64_t{1} << 14;
// GEMV chunks are smaller: a decode step of a small model (stories15m: 0.3-0.9
// MB per layer weight) would otherwise run every layer's GEMV on one thread.
// A spinning worker claims a chunk within about a microsecond, and 64 KB of
// weights take about 5 us to stream.
constexpr int64_t kMinGemvChunkFloats = int64_t{1} << 14;

// ---------------------------------------------------------------------------
// Epilogue-only passes.

// C = beta * addend, elementwise (the addend may be C itself).
void fill_from_addend(const GemmProblem& p) {
  const ConstMatrix& d = p.addend;
  const bool is_c = d.data == p.c && d.row_stride == p.ldc && d.col_stride == 1;
  if (is_c && p.beta == 1.0f) return;
  auto rows = [&](size_t begin, size_t end) {
    for (int64_t i = static_cast<int64_t>(begin); i < static_cast<int64_t>(end); ++i) {
      float* c = p.c + i * p.ldc;
      const float* src = d.data + i * d.row_stride;
      for (int64_t j = 0; j < p.n; ++j) c[j] = p.beta * src[j * d.col_stride];
    }
  };
  const int64_t min_rows = max64(1, kMinChunkFloats / max64(p.n, 1));
  threadpool::parallel_for(static_cast<size_t>(p.m), static_cast<size_t>(min_rows), rows);
}

// C = epilogue(0) everywhere: beta * bias row, the already filled C, or 0.
void fill_without_product(const GemmProblem& p, const Epilogue& ep) {
  if (ep.accumulate) return;  // C already holds beta * addend.
  for (int64_t i = 0; i < p.m; ++i) {
    float* c = p.c + i * p.ldc;
    for (int64_t j = 0; j < p.n; ++j) c[j] = ep.bias != nullptr ? ep.beta * ep.bias[j] : 0.0f;
  }
}

// ---------------------------------------------------------------------------
// Matrix-vector path: m <= kGemvMaxRows, threads split the columns of C.

void run_gemv(const GemmProblem& p, const GemmKernels& kern, const Epilogue& ep, bool nt) {
  // Work unit: 16 weight rows (NT) or 64 columns (NN), aligned with the
  // kernels' blocks.
  const int64_t unit = nt ? 16 : 64;
  const int64_t units = ceil_div(p.n, unit);
  // Bandwidth-bound: chunks sized by the weight bytes they stream.
  const int64_t min_units = max64(1, kMinGemvChunkFloats / max64(unit * p.k, 1));
  auto chunk = [&](size_t begin, size_t end) {
    const int64_t j0 = static_cast<int64_t>(begin) * unit;
    const int64_t j1 = min64(static_cast<int64_t>(end) * unit, p.n);
    Epilogue e = ep;
    if (e.bias != nullptr) e.bias += j0;
    float* c = p.c + j0;
    if (nt) {
      const float* w = p.b.data + j0 * p.b.col_stride;
      kern.gemv_nt(p.m, j1 - j0, p.k, p.a.data, p.a.row_stride, w, p.b.col_stride, c, p.ldc, e);
    } else {
      const float* b = p.b.data + j0;
      kern.gemv_nn(p.m, j1 - j0, p.k, p.a.data, p.a.row_stride, b, p.b.row_stride, c, p.ldc, e);
    }
  };
  threadpool::parallel_for(static_cast<size_t>(units), static_cast<size_t>(min_units), chunk);
}

// ---------------------------------------------------------------------------
// Packed path.

struct PackedPlan {
  const GemmProblem* p;
  const GemmKernels* kern;
  Epilogue ep;
  int64_t kc;       // Depth of each packed block (k split evenly).
  int64_t m_split;  // Task grid: m_split x n_split blocks of C.
  int64_t n_split;
  SlotClaims* claims;
  std::atomic<bool> out_of_memory{false};
};

// A partial edge tile: the micro-kernel writes a full tile to `tile`, and
// only the part inside C goes through the epilogue.
void edge_tile(const PackedPlan& plan, int64_t kc, const float* ap, const float* bp, float* c,
               int64_t rows, int64_t cols, const Epilogue& ep) {
  constexpr int kMaxTile = 16 * 32;
  alignas(64) float tile[kMaxTile];
  const GemmKernels& kern = *plan.kern;
  const Epilogue plain;
  kern.micro(kc, ap, bp, tile, kern.nr, plain);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * plan.p->ldc;
    for (int64_t j = 0; j < cols; ++j) {
      float v = ep.alpha * tile[r * kern.nr + j];
      if (ep.accumulate) v += row[j];
      if (ep.bias != nullptr) v += ep.beta * ep.bias[j];
      row[j] = v;
    }
  }
}

// One block of C, rows [m0, m1) x columns [n0, n1), over the whole of k,
// in BLIS's loop order: for each NC columns, for each KC slice of k, pack
// B's slice; for each MC rows, pack A's slice; then micro-tiles with the B
// panel held in L1 while the A strips stream from L2.
void run_packed_block(PackedPlan& plan, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const GemmProblem& p = *plan.p;
  const GemmKernels& kern = *plan.kern;
  const int64_t mr = kern.mr;
  const int64_t nr = kern.nr;
  const int64_t kc_max = plan.kc;
  size_t slot = 0;
  float* b_pack = plan.claims->claim(&slot);
  if (b_pack == nullptr) {
    plan.out_of_memory.store(true, std::memory_order_relaxed);
    return;
  }
  float* a_pack = b_pack + kc_max * kern.nc;

  for (int64_t jc = n0; jc < n1; jc += kern.nc) {
    const int64_t nc = min64(kern.nc, n1 - jc);
    for (int64_t pc = 0; pc < p.k; pc += kc_max) {
      const int64_t kc = min64(kc_max, p.k - pc);
      kern.pack_b(kc, nc, p.b.data + pc * p.b.row_stride + jc * p.b.col_stride, p.b.row_stride,
                  p.b.col_stride, b_pack);
      // The first slice of k applies the bias; later ones add to C.
      Epilogue ep = plan.ep;
      if (pc > 0) {
        ep.accumulate = true;
        ep.bias = nullptr;
      }
      for (int64_t ic = m0; ic < m1; ic += kern.mc) {
        const int64_t mc = min64(kern.mc, m1 - ic);
        kern.pack_a(mc, kc, p.a.data + ic * p.a.row_stride + pc * p.a.col_stride, p.a.row_stride,
                    p.a.col_stride, a_pack);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int64_t cols = min64(nr, nc - jr);
          const float* bp = b_pack + (jr / nr) * kc * nr;
          Epilogue tile_ep = ep;
          if (tile_ep.bias != nullptr) tile_ep.bias += jc + jr;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            const int64_t rows = min64(mr, mc - ir);
            const float* ap = a_pack + (ir / mr) * kc * mr;
            float* c = p.c + (ic + ir) * p.ldc + jc + jr;
            if (rows == mr && cols == nr) {
              kern.micro(kc, ap, bp, c, p.ldc, tile_ep);
            } else {
              edge_tile(plan, kc, ap, bp, c, rows, cols, tile_ep);
            }
          }
        }
      }
    }
  }
  plan.claims->release(slot);
}

// Threads that may pack at once: the pool's, but no more than the
// workspace has slots for.
int64_t concurrent_tasks(const GemmWorkspace& workspace) {
  return min64(static_cast<int64_t>(threadpool::num_threads()),
               max64(1, static_cast<int64_t>(workspace.slots)));
}

// Runs `count` tasks as at most `concurrency` chunks, so no more tasks run at
// once than there are workspace slots.
template <typename F>
void run_tasks(int64_t count, int64_t concurrency, const F& tasks) {
  threadpool::parallel_for(static_cast<size_t>(count),
                           static_cast<size_t>(ceil_div(count, max64(1, concurrency))), tasks);
}

// Splits C into about kTasksPerThread blocks per thread, by columns first
// (each task packs all of its rows of A, so splitting n keeps A's repacking
// small), then by rows when there are too few column panels.
constexpr int64_t kTasksPerThread = 2;

bool run_packed(const GemmProblem& p, const GemmKernels& kern, const Epilogue& ep) {
  SlotClaims claims(p.workspace);
  PackedPlan plan;
  plan.p = &p;
  plan.kern = &kern;
  plan.ep = ep;
  plan.claims = &claims;
  plan.kc = ceil_div(p.k, ceil_div(p.k, kern.kc));  // Even slices of k.
  const int64_t threads = concurrent_tasks(p.workspace);
  const int64_t n_panels = ceil_div(p.n, kern.nr);
  const int64_t m_strips = ceil_div(p.m, kern.mr);
  plan.n_split = 1;
  plan.m_split = 1;
  if (threads > 1 && p.m * p.n * p.k >= kMinParallelMacs) {
    const int64_t want = threads * kTasksPerThread;
    plan.n_split = min64(want, max64(1, n_panels / 2));
    plan.m_split = min64(ceil_div(want, plan.n_split), max64(1, m_strips / 2));
  }
  auto tasks = [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t tm = static_cast<int64_t>(t) / plan.n_split;
      const int64_t tn = static_cast<int64_t>(t) % plan.n_split;
      // Boundaries on whole strips and panels, so only the matrix's own
      // edges make partial tiles.
      const int64_t m0 = min64(p.m, m_strips * tm / plan.m_split * kern.mr);
      const int64_t m1 = min64(p.m, m_strips * (tm + 1) / plan.m_split * kern.mr);
      const int64_t n0 = min64(p.n, n_panels * tn / plan.n_split * kern.nr);
      const int64_t n1 = min64(p.n, n_panels * (tn + 1) / plan.n_split * kern.nr);
      if (m0 < m1 && n0 < n1) run_packed_block(plan, m0, m1, n0, n1);
    }
  };
  run_tasks(plan.m_split * plan.n_split, threads, tasks);
  return !plan.out_of_memory.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Transposed-weight path (B's columns contiguous, m > kGemvMaxRows): only A
// is packed, as panels of A^T (A is small next to the weight and reused by
// every column); the micro-kernel reads each tile of weight rows in place
// and keeps it in L1 while it meets every panel of the A block.

constexpr int64_t kNtDepth = 512;  // Depth of a packed A block.
constexpr int64_t kNtRows = 256;   // Rows of A per packed block.

struct NtPlan {
  const GemmProblem* p;
  const GemmKernels* kern;
  Epilogue ep;
  int64_t kc;
  int64_t mc;
  int64_t m_split;
  int64_t n_split;
  SlotClaims* claims;
  std::atomic<bool> out_of_memory{false};
};

void run_nt_block(NtPlan& plan, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const GemmProblem& p = *plan.p;
  const GemmKernels& kern = *plan.kern;
  const int64_t mr = kern.mr;
  const int64_t nr = kern.nr;
  size_t slot = 0;
  float* a_pack = plan.claims->claim(&slot);
  if (a_pack == nullptr) {
    plan.out_of_memory.store(true, std::memory_order_relaxed);
    return;
  }
  const int64_t ldw = p.b.col_stride;
  for (int64_t ic = m0; ic < m1; ic += plan.mc) {
    const int64_t mc = min64(plan.mc, m1 - ic);
    for (int64_t pc = 0; pc < p.k; pc += plan.kc) {
      const int64_t kc = min64(plan.kc, p.k - pc);
      // A^T[p][i] = A[i][p]: pack_b over A with its strides swapped.
      kern.pack_b(kc, mc, p.a.data + ic * p.a.row_stride + pc * p.a.col_stride, p.a.col_stride,
                  p.a.row_stride, a_pack);
      Epilogue ep = plan.ep;
      if (pc > 0) {
        ep.accumulate = true;
        ep.bias = nullptr;
      }
      for (int64_t jt = n0; jt < n1; jt += mr) {
        const int64_t rows = min64(mr, n1 - jt);
        const float* w = p.b.data + jt * ldw + pc;
        Epilogue tile_ep = ep;
        if (tile_ep.bias != nullptr) tile_ep.bias += jt;
        for (int64_t ip = 0; ip < mc; ip += nr) {
          kern.micro_nt(kc, w, ldw, rows, a_pack + (ip / nr) * kc * nr, min64(nr, mc - ip),
                        p.c + (ic + ip) * p.ldc + jt, p.ldc, tile_ep);
        }
      }
    }
  }
  plan.claims->release(slot);
}

bool run_nt(const GemmProblem& p, const GemmKernels& kern, const Epilogue& ep) {
  SlotClaims claims(p.workspace);
  NtPlan plan;
  plan.p = &p;
  plan.kern = &kern;
  plan.ep = ep;
  plan.claims = &claims;
  plan.kc = ceil_div(p.k, ceil_div(p.k, kNtDepth));
  plan.mc = kNtRows;
  const int64_t threads = concurrent_tasks(p.workspace);
  const int64_t n_tiles = ceil_div(p.n, kern.mr);
  const int64_t m_panels = ceil_div(p.m, kern.nr);
  plan.n_split = 1;
  plan.m_split = 1;
  if (threads > 1 && p.m * p.n * p.k >= kMinParallelMacs) {
    const int64_t want = threads * kTasksPerThread;
    plan.n_split = min64(want, max64(1, n_tiles / 4));
    plan.m_split = min64(ceil_div(want, plan.n_split), m_panels);
  }
  // Consecutive tasks of one row range (a chunk of the pool's) run as one
  // block, so their rows of A are packed once: at 2 threads a 128-row
  // product is 4 column tasks, 2 a thread, and each task packed all 128
  // rows (20 us of a 300 us half at 128 x 288 x 288, 53 at K = 768).
  auto tasks = [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end;) {
      const int64_t tm = static_cast<int64_t>(t) / plan.n_split;
      const int64_t tn = static_cast<int64_t>(t) % plan.n_split;
      const int64_t tn_end = min64(plan.n_split, tn + static_cast<int64_t>(end - t));
      const int64_t m0 = min64(p.m, m_panels * tm / plan.m_split * kern.nr);
      const int64_t m1 = min64(p.m, m_panels * (tm + 1) / plan.m_split * kern.nr);
      const int64_t n0 = min64(p.n, n_tiles * tn / plan.n_split * kern.mr);
      const int64_t n1 = min64(p.n, n_tiles * tn_end / plan.n_split * kern.mr);
      if (m0 < m1 && n0 < n1) run_nt_block(plan, m0, m1, n0, n1);
      t += static_cast<size_t>(tn_end - tn);
    }
  };
  run_tasks(plan.m_split * plan.n_split, threads, tasks);
  return !plan.out_of_memory.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// AMX path (GemmIsa::kAmx, B transposed, many rows): tasks split C into
// blocks, rows first (each task splits its own rows of A once; the
// weight is pre-split or split per block of rows), columns first when C
// has too few rows for the tasks. Blocks change no element's arithmetic.

constexpr int64_t kAmxBlock = 32;  // Rows and columns of a pass of four tiles.

// Where AMX measured faster than the AVX-512 NT path (torchlight_gemm_bench's
// linear_amx_split / linear vs linear_avx512, one core): enough depth to
// fill a tile, and enough rows to amortize splitting the weight when it is
// not pre-split. Alone, 128 rows of stories15m's products took 0.45-0.7x
// AVX-512's time, but inside a whole 128-token fp32 prefill AMX lost at
// every setting measured (`bench llm --quant fp32`, quiet machine, 3
// alternating rounds: stories15m 1 thread 3898-4946 tok/s against
// 4664-5930, 2 threads 4692-5354 against 6773-7730; stories110m 2
// threads 587 against 800), so a weight split per call waits for 1024
// rows (untested in between: the LLM prefills stay on AVX-512).
bool amx_shape_wins(int64_t m, int64_t n, int64_t k, bool pre_split) {
  return m >= (pre_split ? 32 : 1024) && n >= 16 && k >= 32;
}

// False when a value is inf or NaN (the caller recomputes on AVX-512) or
// no slot was free.
bool run_amx(const GemmProblem& p, const Epilogue& ep, bool* out_of_memory_flag) {
  SlotClaims claims(p.workspace);
  AmxNtBlock block;
  block.a = p.a.data;
  block.lda = p.a.row_stride;
  block.w = p.b.data;
  block.ldw = p.b.col_stride;
  block.split_w = p.b_amx_split;
  block.k = p.k;
  block.c = p.c;
  block.ldc = p.ldc;
  block.ep = ep;
  const int64_t threads = concurrent_tasks(p.workspace);
  const int64_t row_blocks = ceil_div(p.m, kAmxBlock);
  const int64_t col_blocks = ceil_div(p.n, kAmxBlock);
  int64_t m_split = 1;
  int64_t n_split = 1;
  if (threads > 1 && p.m * p.n * p.k >= kMinParallelMacs) {
    const int64_t want = threads * kTasksPerThread;
    if (row_blocks < want && p.m < p.n) {
      // Too few rows for the tasks (a CNN's 7x7 layers: 49 rows, 2 blocks
      // of 32 + 17, split unevenly), and each thread would stream the
      // whole weight (ResNet-18's layer4: 14 MB split): columns give each
      // thread its share of it, at the cost of splitting the few rows of A
      // in every task. MobileNetV2's 7x7 1x1 layers at 2 threads took
      // 0.78-0.83x the time split so; its 14x14 ones (7 row blocks) lost
      // 0.7-1.0x split by columns, so they keep rows (torchlight profile,
      // per-operator minima, session 17, loaded machine).
      n_split = min64(want, col_blocks);
      m_split = min64(ceil_div(want, n_split), row_blocks);
    } else {
      m_split = min64(want, row_blocks);
      n_split = min64(ceil_div(want, m_split), col_blocks);
    }
  }
  std::atomic<bool> failed{false};
  std::atomic<bool> no_slot{false};
  auto tasks = [&](size_t begin, size_t end) {
    size_t slot = 0;
    float* scratch = claims.claim(&slot);
    if (scratch == nullptr) {
      no_slot.store(true, std::memory_order_relaxed);
      return;
    }
    AmxNtBlock own = block;
    own.scratch = scratch;
    own.scratch_bytes = p.workspace.slot_floats * sizeof(float);
    for (size_t t = begin; t < end && !failed.load(std::memory_order_relaxed); ++t) {
      const int64_t tm = static_cast<int64_t>(t) / n_split;
      const int64_t tn = static_cast<int64_t>(t) % n_split;
      const int64_t m0 = min64(p.m, row_blocks * tm / m_split * kAmxBlock);
      const int64_t m1 = min64(p.m, row_blocks * (tm + 1) / m_split * kAmxBlock);
      const int64_t n0 = min64(p.n, col_blocks * tn / n_split * kAmxBlock);
      const int64_t n1 = min64(p.n, col_blocks * (tn + 1) / n_split * kAmxBlock);
      if (m0 < m1 && n0 < n1 && !amx_kernels()->nt_block(own, m0, m1, n0, n1)) {
        failed.store(true, std::memory_order_relaxed);
      }
    }
    claims.release(slot);
  };
  run_tasks(m_split * n_split, threads, tasks);
  *out_of_memory_flag = no_slot.load(std::memory_order_relaxed);
  return !failed.load(std::memory_order_relaxed) && !*out_of_memory_flag;
}

// Whether run_gemm sends `p` (already past the GEMV cases) to run_amx.
bool takes_amx(const GemmProblem& p, const Epilogue& ep) {
  // A rerun on AVX-512 after a non-finite value must see the same C: no
  // accumulation into C.
  return current_isa() == GemmIsa::kAmx && !ep.accumulate && p.b.row_stride == 1 &&
         p.a.col_stride == 1 && amx_shape_wins(p.m, p.n, p.k, p.b_amx_split != nullptr);
}

// ---------------------------------------------------------------------------

Status check_problem(const GemmProblem& p) {
  TL_CHECK_OR_RETURN(p.m >= 0 && p.n >= 0 && p.k >= 0, Error::kInvalidArgument,
                     "gemm sizes must be non-negative, got m=%lld n=%lld k=%lld",
                     static_cast<long long>(p.m), static_cast<long long>(p.n),
                     static_cast<long long>(p.k));
  if (p.m == 0 || p.n == 0) return Error::kOk;
  TL_CHECK_OR_RETURN(p.c != nullptr && p.ldc >= p.n, Error::kInvalidArgument,
                     "gemm output needs data and a row stride >= n=%lld, got %s and ldc=%lld",
                     static_cast<long long>(p.n), p.c == nullptr ? "null" : "data",
                     static_cast<long long>(p.ldc));
  if (p.k > 0 && p.alpha != 0.0f) {
    TL_CHECK_OR_RETURN(p.a.data != nullptr && p.b.data != nullptr, Error::kInvalidArgument,
                       "gemm operand %s is null for m=%lld n=%lld k=%lld",
                       p.a.data == nullptr ? "A" : "B", static_cast<long long>(p.m),
                       static_cast<long long>(p.n), static_cast<long long>(p.k));
  }
  return Error::kOk;
}

bool has_clamp(const GemmProblem& p) {
  return p.output_min != -std::numeric_limits<float>::infinity() ||
         p.output_max != std::numeric_limits<float>::infinity();
}

// C = min(max(C, output_min), output_max), for the paths whose kernels do
// not clamp in their store.
void clamp_c(const GemmProblem& p) {
  auto rows = [&](size_t begin, size_t end) {
    for (int64_t i = static_cast<int64_t>(begin); i < static_cast<int64_t>(end); ++i) {
      float* c = p.c + i * p.ldc;
      for (int64_t j = 0; j < p.n; ++j) c[j] = std::min(std::max(c[j], p.output_min), p.output_max);
    }
  };
  const int64_t min_rows = max64(1, kMinClampChunkFloats / max64(p.n, 1));
  threadpool::parallel_for(static_cast<size_t>(p.m), static_cast<size_t>(min_rows), rows);
}

// Runs a checked problem, clamp excepted; sets *clamped when its kernels
// applied the clamp. False when a packing buffer could not be had.
bool run_product(const GemmProblem& p, bool* clamped) {
  const GemmKernels& kern = *kernels_of(current_isa());
  Epilogue ep;
  ep.alpha = p.alpha;
  ep.beta = p.beta;
  if (p.addend.data != nullptr && p.beta != 0.0f) {
    if (p.addend.row_stride == 0 && p.addend.col_stride == 1) {
      ep.bias = p.addend.data;  // One row for every row of C: fused.
    } else {
      fill_from_addend(p);
      ep.accumulate = true;
      ep.beta = 0.0f;
    }
  }
  if (p.alpha == 0.0f || p.k == 0) {
    fill_without_product(p, ep);
    return true;
  }
  const bool a_rows_contiguous = p.a.col_stride == 1 || p.k == 1;
  if (p.m <= kGemvMaxRows && a_rows_contiguous) {
    if (p.b.row_stride == 1 || p.k == 1) {
      run_gemv(p, kern, ep, /*nt=*/true);
      return true;
    }
    if (p.b.col_stride == 1 || p.n == 1) {
      run_gemv(p, kern, ep, /*nt=*/false);
      return true;
    }
  }
  if (takes_amx(p, ep)) {
    bool no_slot = false;
    Epilogue amx_ep = ep;
    amx_ep.clamp = has_clamp(p);
    amx_ep.lo = p.output_min;
    amx_ep.hi = p.output_max;
    if (run_amx(p, amx_ep, &no_slot)) {
      *clamped = true;
      return true;
    }
    if (no_slot) return false;
    // Inf or NaN in A or B: the split is not exact, AVX-512 keeps IEEE's rules.
  }
  if (kern.micro_nt != nullptr && p.b.row_stride == 1) {
    return run_nt(p, kern, ep);
  }
  return run_packed(p, kern, ep);
}

// Runs a checked problem. False when a packing buffer could not be had.
bool run_gemm(const GemmProblem& p) {
  if (p.m == 0 || p.n == 0) return true;
  bool clamped = false;
  if (!run_product(p, &clamped)) return false;
  if (!clamped && has_clamp(p)) clamp_c(p);
  return true;
}

Status out_of_memory(const GemmProblem& p) {
  return Status::error(Error::kMemoryAllocationFailed,
                       "gemm has no free packing slot for m=%lld n=%lld k=%lld (its workspace has "
                       "%zu slots of %zu floats; it needs one of %zu per thread)",
                       static_cast<long long>(p.m), static_cast<long long>(p.n),
                       static_cast<long long>(p.k), p.workspace.slots, p.workspace.slot_floats,
                       gemm_slot_floats());
}

}  // namespace

size_t gemm_slot_floats() {
  size_t floats = static_cast<size_t>(kNtDepth * kNtRows);
  for (GemmIsa isa : {GemmIsa::kPortable, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
    const GemmKernels* kern = kernels_of(isa);
    if (kern == nullptr) continue;
    const size_t packed = static_cast<size_t>(kern->kc * (kern->nc + kern->mc));
    if (packed > floats) floats = packed;
  }
  if (amx_kernels() != nullptr) {
    const size_t amx = (amx_kernels()->scratch_bytes() + sizeof(float) - 1) / sizeof(float);
    if (amx > floats) floats = amx;
  }
  // Whole cache lines per slot, so slots never share one.
  return (floats + 15) / 16 * 16;
}

size_t gemm_workspace_bytes(size_t threads) {
  const size_t slots = threads == 0 ? 1 : (threads < kMaxGemmSlots ? threads : kMaxGemmSlots);
  return gemm_slot_floats() * sizeof(float) * slots;
}

GemmWorkspace make_gemm_workspace(void* memory, size_t bytes) {
  GemmWorkspace workspace;
  const size_t slot_floats = gemm_slot_floats();
  workspace.data = static_cast<float*>(memory);
  workspace.slot_floats = slot_floats;
  const size_t slots = memory == nullptr ? 0 : bytes / (slot_floats * sizeof(float));
  workspace.slots = slots < kMaxGemmSlots ? slots : kMaxGemmSlots;
  return workspace;
}

Status gemm(const GemmProblem& problem) {
  TL_RETURN_IF_ERROR(check_problem(problem));
  return run_gemm(problem) ? Status() : out_of_memory(problem);
}

Status gemm_batched(const GemmProblem& problem, int64_t batch, int64_t a_batch_stride,
                    int64_t b_batch_stride, int64_t c_batch_stride,
                    int64_t addend_batch_stride) {
  TL_CHECK_OR_RETURN(batch >= 0, Error::kInvalidArgument, "gemm batch must be non-negative, got %lld",
                     static_cast<long long>(batch));
  TL_RETURN_IF_ERROR(check_problem(problem));
  auto item = [&](int64_t i, const GemmWorkspace& workspace) {
    GemmProblem p = problem;
    p.workspace = workspace;
    if (p.a.data != nullptr) p.a.data += i * a_batch_stride;
    if (p.b.data != nullptr) p.b.data += i * b_batch_stride;
    if (p.addend.data != nullptr) p.addend.data += i * addend_batch_stride;
    p.c += i * c_batch_stride;
    return run_gemm(p);
  };
  if (batch == 0 || problem.m == 0 || problem.n == 0) return Error::kOk;
  const int64_t threads = static_cast<int64_t>(threadpool::num_threads());
  const int64_t macs = problem.m * problem.n * problem.k;
  // Small products gain nothing from splitting: one per thread instead
  // (gemm's own parallel_for then runs inline).
  const bool per_item_threads = threads == 1 || batch == 1 ||
                                (macs >= (int64_t{1} << 22) && batch < 2 * threads);
  if (per_item_threads) {
    for (int64_t i = 0; i < batch; ++i) {
      if (!item(i, problem.workspace)) return out_of_memory(problem);
    }
    return Error::kOk;
  }
  // Each chunk of items packs in one workspace slot of its own, and there
  // are no more chunks than slots.
  std::atomic<bool> failed{false};
  SlotClaims claims(problem.workspace);
  const int64_t slots = max64(1, static_cast<int64_t>(problem.workspace.slots));
  const int64_t min_items =
      max64(max64(1, kMinParallelMacs / max64(macs, 1)), ceil_div(batch, slots));
  threadpool::parallel_for(static_cast<size_t>(batch), static_cast<size_t>(min_items),
                           [&](size_t begin, size_t end) {
                             size_t slot = 0;
                             GemmWorkspace own;
                             own.data = claims.claim(&slot);
                             own.slot_floats = problem.workspace.slot_floats;
                             own.slots = own.data == nullptr ? 0 : 1;
                             for (size_t i = begin; i < end; ++i) {
                               if (!item(static_cast<int64_t>(i), own)) failed.store(true);
                             }
                             if (own.data != nullptr) claims.release(slot);
                           });
  return failed.load() ? out_of_memory(problem) : Status();
}

const char* to_string(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kPortable: return "portable";
    case GemmIsa::kAvx2: return "avx2";
    case GemmIsa::kAvx512: return "avx512";
    case GemmIsa::kAmx: return "amx";
  }
  return "unknown";
}

bool gemm_isa_supported(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kPortable: return true;
#if defined(TL_GEMM_HAVE_X86_KERNELS)
    case GemmIsa::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GemmIsa::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
    case GemmIsa::kAmx:
#if defined(__linux__)
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16") &&
             amx_granted();
#else
      return false;
#endif
#endif
    default: return false;
  }
}

GemmIsa active_gemm_isa() { return current_isa(); }

Status set_gemm_isa(GemmIsa isa) {
  TL_CHECK_OR_RETURN(gemm_isa_supported(isa), Error::kNotSupported,
                     "gemm instruction set '%s' is not supported by this build or CPU",
                     to_string(isa));
  g_active_isa.store(static_cast<int>(isa), std::memory_order_release);
  return Error::kOk;
}

void reset_gemm_isa() { g_active_isa.store(static_cast<int>(best_isa()), std::memory_order_release); }

bool gemm_uses_amx(int64_t m, int64_t n, int64_t k) {
  return current_isa() == GemmIsa::kAmx && m > kGemvMaxRows && amx_shape_wins(m, n, k, true);
}

size_t gemm_amx_split_bytes(int64_t n, int64_t k) {
  if (!gemm_isa_supported(GemmIsa::kAmx) || n <= 0 || k <= 0) return 0;
  return amx_kernels()->split_weight_bytes(n, k);
}

bool gemm_amx_split_weight(const float* w, int64_t ldw, int64_t n, int64_t k, void* out) {
  if (gemm_amx_split_bytes(n, k) == 0 || w == nullptr || out == nullptr) return false;
  return amx_kernels()->split_weight(w, ldw, n, k, out);
}

}  // namespace torchlight::optimized
