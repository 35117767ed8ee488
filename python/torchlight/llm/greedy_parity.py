"""Greedy parity of an export_llama program with PyTorch, tie-aware.

    ./torchlight exec python3 -m torchlight.llm.greedy_parity --pte llama.pte \\
        --prompt-tokens 1,15043,3186 --new-tokens 32 -- \\
        --model stories110m -kv --use_sdpa_with_kv_cache -X -qmode 8da4w -G 128 -E 4,32 \\
        --max_seq_length 128

The flags after `--` are the export_llama flags the program was written with;
they rebuild the same eager model (same seed, same quantization; with -X the
8da4w linears as XNNPACK computes them, with bf16 block scales). PyTorch
generates greedily; the program is then fed PyTorch's tokens (teacher
forcing) so every step compares the same context. Each step's logits must
agree within a tolerance, --rtol (default 2%) of PyTorch's logit range at
that step (8da4w rounds activations per token, so a value on a rounding
boundary can land one step apart); an argmax that differs is a near-tie when
PyTorch's logits of the two tokens are within that tolerance, else a
mismatch. It also reports how many leading tokens the program's own
free-running greedy output shares with PyTorch's (a near-tie there makes the
rest of the sequences diverge legitimately).

Exit status: 0 when every step's logits are within tolerance and no argmax
differs beyond a near-tie, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import torch


@dataclass
class Step:
    position: int
    torch_token: int
    program_token: int
    max_logit_diff: float
    torch_gap: float  # PyTorch's logit of its token minus that of the program's.
    tolerance: float

    @property
    def within_tolerance(self) -> bool:
        return self.max_logit_diff <= self.tolerance

    @property
    def kind(self) -> str:
        if self.torch_token == self.program_token:
            return "equal"
        return "near-tie" if self.torch_gap <= self.tolerance else "mismatch"


def _positions(upstream: bool, start: int, count: int) -> torch.Tensor:
    # Upstream's layout takes the start position; ours every position.
    if upstream:
        return torch.tensor([start], dtype=torch.long)
    return torch.arange(start, start + count, dtype=torch.long)


def _last_logits(logits) -> torch.Tensor:
    logits = torch.as_tensor(logits).float()
    return logits.reshape(-1, logits.shape[-1])[-1]


def compare(model, program, prompt: List[int], new_tokens: int, rtol: float) -> tuple:
    """(steps, PyTorch's tokens)."""
    upstream = getattr(model.config, "upstream_layout", False)
    model.eval()
    model.reset_cache()
    steps: List[Step] = []
    with torch.no_grad():
        feed = torch.tensor([prompt], dtype=torch.long)
        ours_feed_pos = _positions(upstream, 0, len(prompt))
        theirs = model(feed, ours_feed_pos)[0, -1].float()
        (ours,) = program.run("forward", [feed, ours_feed_pos])
        ours = _last_logits(ours)
        reference: List[int] = []
        position = len(prompt)
        while len(reference) < new_tokens and position < model.max_seq_len:
            t = int(theirs.argmax())
            o = int(ours.argmax())
            steps.append(Step(position, t, o, float((ours - theirs).abs().max()),
                              float(theirs[t] - theirs[o]),
                              rtol * float(theirs.max() - theirs.min())))
            reference.append(t)
            token = torch.tensor([[t]], dtype=torch.long)
            pos = _positions(upstream, position, 1)
            theirs = model(token, pos)[0, -1].float()
            (ours,) = program.run("forward", [token, pos])
            ours = _last_logits(ours)
            position += 1
    return steps, reference


def free_run(program_path: Path, upstream: bool, prompt: List[int], count: int,
             max_seq_len: int) -> List[int]:
    """The program's own greedy tokens, from a fresh load (an empty cache)."""
    import torchlight.runtime

    program = torchlight.runtime.load(str(program_path))
    (logits,) = program.run("forward", [torch.tensor([prompt]),
                                        _positions(upstream, 0, len(prompt))])
    out: List[int] = []
    position = len(prompt)
    while len(out) < count and position < max_seq_len:
        out.append(int(_last_logits(logits).argmax()))
        (logits,) = program.run("forward", [torch.tensor([[out[-1]]]),
                                            _positions(upstream, position, 1)])
        position += 1
    return out


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, export_flags = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) \
        if "--" in argv else (argv, [])
    p = argparse.ArgumentParser(prog="greedy_parity", description=__doc__.split("\n\n")[0])
    p.add_argument("--pte", type=Path, required=True)
    p.add_argument("--prompt-tokens", required=True, help="comma-separated token ids")
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--rtol", type=float, default=0.02,
                   help="allowed logit difference, a fraction of PyTorch's logit range")
    args = p.parse_args(ours)
    from torchlight.backends.xnnpack.runtime_scales import as_xnnpack_computes
    from torchlight.llm.export_llama import build_model, build_parser
    import torchlight.runtime

    export_args = build_parser().parse_args(export_flags)
    if not export_args.use_kv_cache:
        p.error("the program must have a KV cache (-kv): without one the runner re-feeds "
                "the sequence, which this comparison does not model")
    prompt = [int(t) for t in args.prompt_tokens.split(",")]
    model = build_model(export_args)
    if export_args.xnnpack:
        model = as_xnnpack_computes(model)
    steps, reference = compare(model, torchlight.runtime.load(str(args.pte)), prompt,
                               args.new_tokens, args.rtol)
    upstream = getattr(model.config, "upstream_layout", False)
    program_tokens = free_run(args.pte, upstream, prompt, len(reference), model.max_seq_len)
    leading = next((i for i, (a, b) in enumerate(zip(program_tokens, reference)) if a != b),
                   min(len(program_tokens), len(reference)))
    kinds = [s.kind for s in steps]
    outside = [s for s in steps if not s.within_tolerance]
    print(f"steps: {len(steps)}  equal argmax: {kinds.count('equal')}  "
          f"near-ties: {kinds.count('near-tie')}  mismatches: {kinds.count('mismatch')}  "
          f"logits outside tolerance: {len(outside)}")
    worst = max(steps, key=lambda s: s.max_logit_diff / max(s.tolerance, 1e-30))
    print(f"largest logit difference: {worst.max_logit_diff:.4g} at position {worst.position} "
          f"(tolerance {worst.tolerance:.4g})")
    for s in steps:
        if s.kind != "equal" or not s.within_tolerance:
            print(f"  position {s.position}: PyTorch {s.torch_token}, program {s.program_token}, "
                  f"PyTorch's gap {s.torch_gap:.4g}, largest difference "
                  f"{s.max_logit_diff:.4g}, tolerance {s.tolerance:.4g}: {s.kind}")
    print(f"free-running greedy: {leading} of {len(reference)} leading tokens equal")
    print(f"  PyTorch: {reference}")
    print(f"  program: {program_tokens}")
    return 1 if "mismatch" in kinds or outside else 0


if __name__ == "__main__":
    sys.exit(main())
