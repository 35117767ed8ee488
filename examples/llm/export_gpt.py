"""Exports a GPT checkpoint (train_gpt.py's) to .pte and prints the text
PyTorch generates from it: the reference the C++ runner's output is checked
against.

    ./torchlight exec python3 examples/llm/export_gpt.py \
        --checkpoint examples/llm/models/brown_gpt_bpe.pt --pte build/brown_gpt_bpe.pte \
        --prompt "The jury said" --tokens 200

A BPE checkpoint names its tokenizer.json ("tokenizer" entry), which sits
beside it; the exporter copies it beside the .pte and records its file name
as get_tokenizer(), so `torchlight llm --model X.pte` finds it. A byte-level
checkpoint ("tokenizer": "bytes") needs no file.

The program has one method, forward(tokens [1, T] int64, input_pos [T] int64)
-> logits [1, T, 256], 1 <= T <= block_size, with the KV caches as mutable
buffers: call it once with the prompt at positions 0..P-1, then once per new
token. Token ids are bytes. The program also carries get_max_seq_len,
get_vocab_size and get_tokenizer ("bytes") for the C++ runner:

    build/release/bin/torchlight llm --model build/brown_gpt.pte --prompt "The jury said"

By default attention is exported as plain operators; --custom-op keeps
torchlight::sdpa_with_kv_cache (needs the fused kernel in the runtime and the
exporter's support for mutating custom ops).

Weight quantization takes upstream ExecuTorch's LLM export flags
(torchlight.llm.quantize): -qmode 8da4w|int8|4w, -G group size (32, 64,
128, 256; default 128), -E bits,group for the embedding tables (8,0: int8
per row; 4,32: 4-bit in groups of 32). The reference text is then the
quantized model's:

    ... export_gpt.py --pte build/brown_gpt_8da4w.pte -qmode 8da4w -G 128 -E 4,32

-X/--xnnpack delegates what XNNPACK can run (linears, 8da4w linears as its
blockwise 4-bit fully-connected, element-wise operators) with upstream's
XnnpackPartitioner; the rest stays on our kernels.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import torch

from torchlight.llm import export_llm, generate
from torchlight.llm.bpe import ByteLevelBPE
from torchlight.llm.gpt_weights import load_nanogpt_checkpoint
from torchlight.llm.metadata import llm_metadata_methods
from torchlight.llm.quantize import QMODES, quantize_model

REPO = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", type=Path,
                   default=REPO / "examples/llm/models/brown_gpt_bpe.pt")
    p.add_argument("--pte", type=Path, help="write the program here")
    p.add_argument("--custom-op", action="store_true", help="keep the fused attention operator")
    p.add_argument("--prompt", default="The ")
    p.add_argument("--tokens", type=int, default=200, help="0: export only")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-qmode", "--quantization_mode", choices=QMODES, default=None,
                   help="linear weight quantization")
    p.add_argument("-G", "--group_size", type=int, default=128,
                   help="group size of 8da4w and 4w (32, 64, 128, 256)")
    p.add_argument("-E", "--embedding_quantize", default=None, metavar="BITS,GROUP",
                   help="embedding quantization, e.g. 8,0 or 4,32")
    p.add_argument("-X", "--xnnpack", action="store_true", help="delegate to XNNPACK")
    args = p.parse_args(argv)

    checkpoint = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    tokenizer = checkpoint.get("tokenizer")
    if not isinstance(tokenizer, str) or not tokenizer:
        print(f"error: {args.checkpoint} names no tokenizer (\"tokenizer\": {tokenizer!r})",
              file=sys.stderr)
        return 2
    tokenizer_file = None if tokenizer == "bytes" else args.checkpoint.parent / tokenizer
    if tokenizer_file is not None and not tokenizer_file.is_file():
        print(f"error: {args.checkpoint}'s tokenizer {tokenizer_file} does not exist",
              file=sys.stderr)
        return 2
    codec = ByteLevelBPE.load_tokenizer_json(tokenizer_file) if tokenizer_file else None
    model = load_nanogpt_checkpoint(checkpoint, use_custom_op=args.custom_op)
    if args.quantization_mode or args.embedding_quantize:
        try:
            skipped = quantize_model(model, args.quantization_mode, args.group_size,
                                     args.embedding_quantize)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if skipped:
            print(f"left float (input width not a multiple of {args.group_size}): "
                  f"{', '.join(skipped)}", file=sys.stderr)
    if args.tokens > 0:  # --tokens 0: export only
        prompt = codec.encode(args.prompt) if codec else list(args.prompt.encode("utf-8"))
        out = generate(model, prompt, args.tokens, temperature=args.temperature, top_k=args.top_k,
                       generator=torch.Generator().manual_seed(args.seed))
        print(codec.decode(prompt + out) if codec
              else bytes(prompt + out).decode("utf-8", errors="replace"))

    if args.pte is not None:
        import torchlight
        # The metadata lets `torchlight llm --model X.pte` run without
        # --tokenizer: "bytes" or the tokenizer.json beside the .pte; there is
        # no BOS or EOS. Generation reads only the last position's logits, so
        # the program computes no others.
        exported = export_llm(model, last_logits_only=True)
        metadata = llm_metadata_methods(model, tokenizer=tokenizer)
        if tokenizer_file is not None:
            args.pte.parent.mkdir(parents=True, exist_ok=True)
            beside = args.pte.parent / tokenizer
            if beside.resolve() != tokenizer_file.resolve():
                shutil.copyfile(tokenizer_file, beside)
        if args.xnnpack:
            from torchlight.backends.xnnpack.partition.xnnpack_partitioner import \
                XnnpackPartitioner
            edge = torchlight.to_edge_transform_and_lower(
                exported, partitioner=[XnnpackPartitioner()], constant_methods=metadata)
        else:
            edge = torchlight.to_edge(exported, constant_methods=metadata)
        program = edge.to_executorch(torchlight.ExecutorchBackendConfig())
        args.pte.parent.mkdir(parents=True, exist_ok=True)
        program.save(str(args.pte))
        print(f"wrote {args.pte} ({args.pte.stat().st_size / 2**20:.1f} MiB); operators: "
              f"{', '.join(program.operators())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
