// gemm: the fp32 matrix product behind the optimized matmul kernels.
//
//   C[m, n] = alpha * A[m, k] @ B[k, n] + beta * addend
//
// A, B and the addend are strided views, so one entry point serves every
// layout: B given as a row-major [k, n] matrix ("NN": mm, addmm, bmm) or as
// a row-major [n, k] weight read transposed ("NT": linear's weight, with
// row_stride 1 and col_stride k). C is row-major (unit column stride).
//
// Paths, picked from the shape:
//  - m <= kGemvMaxRows and B's rows or columns contiguous: matrix-vector
//    style (decode): every weight element is read once and used for all m
//    rows; threads split n;
//  - B transposed (NT, prefill): only A is packed; the micro-kernel reads
//    tiles of weight rows in place and computes tiles of C^T;
//  - otherwise packed, register-blocked GEMM: A and B are copied into
//    cache-sized panels (BLIS's loop nest: n by NC, k by KC, m by MC) and a
//    micro-kernel computes MR x NR tiles of C; threads split C into blocks;
//  - alpha == 0 or k == 0: no product, C = beta * addend (or zeros).
//
// Each path has AVX-512, AVX2+FMA and portable versions; the best one the
// CPU supports is chosen at run time (set_gemm_isa() overrides it for tests
// and benchmarks; TORCHLIGHT_GEMM_ISA=portable|avx2|avx512|amx caps it).
// On CPUs with AMX-BF16 granted by the OS (GemmIsa::kAmx), NT products with
// enough rows run on bf16 tiles instead, fp32-accurate: each operand split
// into three bf16 parts and the six products of order <= 2 summed
// (gemm_amx_kernels.h). Threads come from extension/threadpool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "runtime/core/status.h"

namespace torchlight::optimized {

/// A borrowed strided fp32 matrix: element [r][c] is
/// data[r * row_stride + c * col_stride]. A stride of 0 broadcasts.
struct ConstMatrix {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

/// Packing memory for gemm: `slots` slices of `slot_floats` floats, one for
/// each task packing at once (so, one per thread). Borrowed from the caller:
/// a kernel gets it from its method's scratch, so gemm never allocates.
struct GemmWorkspace {
  float* data = nullptr;  // 64-byte aligned.
  size_t slot_floats = 0;
  size_t slots = 0;
};

/// Slots are claimed through a 64-bit mask.
constexpr size_t kMaxGemmSlots = 64;

/// Floats one slot needs, for every instruction set (at most about 1.2 MB).
size_t gemm_slot_floats();
/// Bytes of a workspace for `threads` threads at once (0 counts as 1).
size_t gemm_workspace_bytes(size_t threads);
/// A workspace over `bytes` of `memory` (64-byte aligned): as many whole
/// slots as fit.
GemmWorkspace make_gemm_workspace(void* memory, size_t bytes);

/// One product. Every pointer is borrowed for the duration of the call.
struct GemmProblem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  ConstMatrix a;        // [m, k]
  ConstMatrix b;        // [k, n]
  float* c = nullptr;   // [m, n], row-major with row stride ldc
  int64_t ldc = 0;      // >= n
  float alpha = 1.0f;
  float beta = 0.0f;
  /// [m, n] (broadcast through zero strides) scaled by beta and added; may
  /// be C itself. Ignored when null or beta == 0 (NaN in it does not
  /// propagate then, as in BLAS). alpha == 0 likewise skips the product.
  ConstMatrix addend;
  /// Needed by products that pack (more than kGemvMaxRows rows); with fewer
  /// slots than threads, gemm uses fewer threads.
  GemmWorkspace workspace;
  /// Optional, B given transposed only: B's [n, k] weight already split for
  /// the AMX path (gemm_amx_split_weight of this very B), so calls do not
  /// split it again. Ignored by the other paths.
  const void* b_amx_split = nullptr;
  /// C clamped to [output_min, output_max] at the end (a fused ReLU /
  /// ReLU6). The AMX path clamps in its store, while the tile is in
  /// registers; the other paths clamp C after the product.
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
};

/// The largest m served by the matrix-vector path.
constexpr int64_t kGemvMaxRows = 16;

/// Computes `problem` with the active instruction set on the threadpool's
/// threads. Errors: kInvalidArgument for negative sizes, ldc < n, or a null
/// data pointer of an operand with elements; kMemoryAllocationFailed when a
/// product that packs has no workspace slot.
Status gemm(const GemmProblem& problem);

/// `batch` independent products: item i uses a, b, c and addend advanced
/// by i times the given element strides. Small items run one per thread;
/// large ones one after another, each using every thread. Errors: as gemm,
/// and kInvalidArgument for a negative batch.
Status gemm_batched(const GemmProblem& problem, int64_t batch, int64_t a_batch_stride,
                    int64_t b_batch_stride, int64_t c_batch_stride,
                    int64_t addend_batch_stride = 0);

/// Instruction sets the kernels are written for.
enum class GemmIsa : uint8_t {
  kPortable = 0,  // Plain C++ the compiler vectorizes for the baseline ISA.
  kAvx2 = 1,      // AVX2 + FMA (x86-64 only).
  kAvx512 = 2,    // AVX-512F (x86-64 only).
  kAmx = 3,       // kAvx512, plus AMX-BF16 tiles for NT products with many rows.
};

const char* to_string(GemmIsa isa);

/// Whether `isa` is compiled into this build and supported by this CPU
/// (and its OS state, as __builtin_cpu_supports checks).
bool gemm_isa_supported(GemmIsa isa);

/// The instruction set gemm() uses now.
GemmIsa active_gemm_isa();

/// Forces gemm() onto `isa` (tests compare every supported path). Not safe
/// while another thread is inside gemm(). Errors: kNotSupported when
/// gemm_isa_supported(isa) is false (the active set is unchanged).
Status set_gemm_isa(GemmIsa isa);

/// Back to the best supported instruction set (capped by
/// TORCHLIGHT_GEMM_ISA, read once).
void reset_gemm_isa();

/// Whether gemm() with the active set runs an NT product of this shape
/// (B given transposed, A's rows contiguous, no addend other than a bias
/// row) on AMX tiles: only where that measured faster than AVX-512.
bool gemm_uses_amx(int64_t m, int64_t n, int64_t k);

/// Bytes of B's [n, k] weight split for the AMX path (0 when this build or
/// CPU has no AMX path).
size_t gemm_amx_split_bytes(int64_t n, int64_t k);

/// Splits the weight w ([n, k], row stride ldw, contiguous rows) into
/// `out` (gemm_amx_split_bytes, 64-byte aligned) for GemmProblem::
/// b_amx_split. False (out unusable) without an AMX path, or when a weight
/// is inf or NaN (the per-call path then falls back to AVX-512).
bool gemm_amx_split_weight(const float* w, int64_t ldw, int64_t n, int64_t k, void* out);

}  // namespace torchlight::optimized
