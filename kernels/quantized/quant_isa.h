// Which instruction set the fused quantized linears (8da4w, qs8) run on,
// chosen once at run time from cpuid, best first: AMX-INT8 (qs8 and 8da4w
// prefill; granted by the kernel), AVX-512 VNNI (with BW and VL), AVX-VNNI (the 256-bit VEX form, e.g. Alder Lake), AVX2 + FMA,
// generic. Every path sums exactly in int32 and gives the same floats, so
// the choice is speed only.
//
// TORCHLIGHT_QUANT_ISA=generic|avx2|avxvnni|avx512vnni|amx caps the choice (to
// compare the paths on one CPU); a cap above what the CPU has changes
// nothing. The selection functions also take the ISA as an argument, which
// tests and benchmarks use.
#pragma once

namespace torchlight::quantized {

// kAmx: AVX-512 VNNI plus AMX-INT8 tiles for many-row calls of linear_qs8,
// linear_8da4w and linear_int8 (its activations as int8 digits); the rest
// runs as kAvx512Vnni.
enum class QuantIsa { kGeneric = 0, kAvx2 = 1, kAvxVnni = 2, kAvx512Vnni = 3, kAmx = 4 };

/// The best QuantIsa this CPU (and OS) runs, ignoring the cap.
QuantIsa detected_quant_isa();

/// detected_quant_isa() lowered to TORCHLIGHT_QUANT_ISA's cap (read once;
/// an unknown value is logged and ignored).
QuantIsa quant_isa();

/// Whether this CPU runs `isa` (for tests that walk every path).
bool cpu_has_quant_isa(QuantIsa isa);

const char* quant_isa_name(QuantIsa isa);

/// Of one loop's builds, the one for `isa` (the selection functions).
template <typename Fn>
Fn for_quant_isa(QuantIsa isa, Fn generic, Fn avx2, Fn avxvnni, Fn avx512vnni) {
  switch (isa) {
    case QuantIsa::kAmx:
    case QuantIsa::kAvx512Vnni: return avx512vnni;
    case QuantIsa::kAvxVnni: return avxvnni;
    case QuantIsa::kAvx2: return avx2;
    case QuantIsa::kGeneric: break;
  }
  return generic;
}

}  // namespace torchlight::quantized
