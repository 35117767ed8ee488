// Run-time choice of the quantized linears' instruction set (quant_isa.h).
#include "kernels/quantized/quant_isa.h"

#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "runtime/platform/log.h"

namespace torchlight::quantized {
namespace {

constexpr QuantIsa kAll[] = {QuantIsa::kGeneric, QuantIsa::kAvx2, QuantIsa::kAvxVnni,
                             QuantIsa::kAvx512Vnni, QuantIsa::kAmx};

#if defined(__x86_64__) && defined(__linux__)
// Linux hands out the AMX tile state (8 KiB per thread) only on request.
bool amx_granted() {
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

QuantIsa detect() {
#if defined(__x86_64__) || defined(_M_X64)
  // Every x86 path below generic also uses AVX2 + FMA for its float steps.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return QuantIsa::kGeneric;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
#if defined(__linux__)
    if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-int8") && amx_granted()) {
      return QuantIsa::kAmx;
    }
#endif
    return QuantIsa::kAvx512Vnni;
  }
  if (__builtin_cpu_supports("avxvnni")) return QuantIsa::kAvxVnni;
  return QuantIsa::kAvx2;
#else
  return QuantIsa::kGeneric;
#endif
}

// The best ISA at or below `cap` this CPU runs (an AVX-512 VNNI CPU may
// lack AVX-VNNI: Ice Lake, Zen 4).
QuantIsa best_up_to(QuantIsa cap) {
  for (int i = static_cast<int>(cap); i > 0; --i) {
    if (cpu_has_quant_isa(kAll[i])) return kAll[i];
  }
  return QuantIsa::kGeneric;
}

QuantIsa capped() {
  const QuantIsa best = detected_quant_isa();
  const char* cap = std::getenv("TORCHLIGHT_QUANT_ISA");
  if (cap == nullptr || *cap == '\0') return best;
  for (const QuantIsa isa : kAll) {
    if (std::strcmp(cap, quant_isa_name(isa)) == 0) return best_up_to(isa);
  }
  TL_LOG(kTlLogWarning,
         "TORCHLIGHT_QUANT_ISA is '%s', expected generic, avx2, avxvnni, avx512vnni or amx; "
         "using %s",
         cap, quant_isa_name(best));
  return best;
}

}  // namespace

QuantIsa detected_quant_isa() {
  static const QuantIsa isa = detect();
  return isa;
}

QuantIsa quant_isa() {
  static const QuantIsa isa = capped();
  return isa;
}

bool cpu_has_quant_isa(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  // AVX-VNNI is not implied by AVX-512 VNNI.
  if (isa == QuantIsa::kAvxVnni && detected_quant_isa() >= QuantIsa::kAvx512Vnni) {
    return __builtin_cpu_supports("avxvnni");
  }
#endif
  return isa <= detected_quant_isa();
}

const char* quant_isa_name(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::kGeneric: return "generic";
    case QuantIsa::kAvx2: return "avx2";
    case QuantIsa::kAvxVnni: return "avxvnni";
    case QuantIsa::kAvx512Vnni: return "avx512vnni";
    case QuantIsa::kAmx: return "amx";
  }
  return "?";
}

}  // namespace torchlight::quantized
