"""Llama checkpoints in the formats people have, loaded into torchlight's
Llama (llama.py, Meta's parameter names and interleaved rotary pairs):

  Meta        consolidated.pth + params.json (Llama 2, 3, 3.1, 3.2, stories):
              dim, n_layers, n_heads, n_kv_heads, vocab_size, multiple_of,
              ffn_dim_multiplier, norm_eps, rope_theta, use_scaled_rope
  Hugging Face  a directory with config.json (LlamaForCausalLM) and
              model.safetensors (or shards listed in model.safetensors.index.json)
  llama2.c    .bin (llama2c.py)
  nanoGPT     ckpt.pt with "model" and "model_args" (a GPT; gpt_weights.py)

load_checkpoint(path, params) picks the format from the path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Mapping, Optional, Union

import torch
from torch import nn

from torchlight.llm.gpt_weights import check_weights_fit
from torchlight.llm.llama import Llama, LlamaConfig

PathLike = Union[str, Path]

# Llama 3.1's RoPE scaling constants (the only ones the model implements).
_ROPE_SCALING_FIXED = {"low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192}


def meta_hidden_dim(dim: int, multiple_of: int, ffn_dim_multiplier: Optional[float]) -> int:
    """Meta's feed-forward width: 2/3 of 4 * dim, times ffn_dim_multiplier,
    rounded up to a multiple of multiple_of."""
    hidden = int(2 * (4 * dim) / 3)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def config_from_meta_params(params: Mapping, vocab_size: Optional[int] = None,
                            **overrides) -> LlamaConfig:
    """A LlamaConfig from Meta's params.json values. vocab_size -1 (Llama 2's
    params) takes `vocab_size` (from the embedding table)."""
    try:
        dim, n_layers, n_heads = int(params["dim"]), int(params["n_layers"]), int(params["n_heads"])
    except KeyError as e:
        raise ValueError(f"params.json has no {e.args[0]!r} entry") from None
    vocab = int(params.get("vocab_size", -1))
    if vocab <= 0:
        if vocab_size is None:
            raise ValueError(f"params.json has vocab_size {vocab} and no checkpoint to take it "
                             f"from")
        vocab = vocab_size
    fields = dict(dim=dim, n_layers=n_layers, n_heads=n_heads,
                  n_kv_heads=int(params.get("n_kv_heads") or n_heads), vocab_size=vocab,
                  hidden_dim=int(params.get("hidden_dim") or meta_hidden_dim(
                      dim, int(params.get("multiple_of", 256)), params.get("ffn_dim_multiplier"))),
                  norm_eps=float(params.get("norm_eps", 1e-5)),
                  rope_theta=float(params.get("rope_theta", 10000.0)),
                  use_scaled_rope=bool(params.get("use_scaled_rope", False)),
                  rope_scale_factor=float(params.get("rope_scale_factor", 8.0)),
                  shared_classifier=False)
    fields.update(overrides)
    return LlamaConfig(**fields)


def _finish(config: LlamaConfig, sd: Dict[str, torch.Tensor], source: str) -> Llama:
    if "output.weight" not in sd:  # Tied embeddings (Llama 3.2 1B/3B).
        config.shared_classifier = True
    model = Llama(config)
    tied = frozenset({"output.weight"}) if config.shared_classifier else frozenset()
    check_weights_fit(model, sd, source, may_be_missing=tied)
    model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=False)
    return model.eval()


def load_meta_llama(checkpoint: PathLike, params: PathLike, **overrides) -> Llama:
    """A Llama from Meta's consolidated.pth and params.json. `overrides` set
    LlamaConfig fields (max_seq_len, use_custom_op, upstream_layout, ...)."""
    sd = torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=True)
    if "model" in sd and isinstance(sd["model"], Mapping):
        sd = sd["model"]
    sd = {k: v for k, v in sd.items() if not k.endswith("rope.freqs")}  # Llama 2's table.
    meta = json.loads(Path(params).read_text())
    vocab = sd["tok_embeddings.weight"].shape[0] if "tok_embeddings.weight" in sd else None
    config = config_from_meta_params(meta, vocab, **overrides)
    return _finish(config, sd, str(checkpoint))


def hf_unpermute(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Hugging Face's q/k projection rows ([half of each head's pairs' first
    elements, then the seconds], for its rotate_half rotary) back into Meta's
    interleaved pairs."""
    rows, cols = weight.shape
    return weight.view(n_heads, 2, rows // n_heads // 2, cols).transpose(1, 2).reshape(rows, cols)


def _read_safetensors(directory: Path) -> Dict[str, torch.Tensor]:
    from safetensors.torch import load_file
    index = directory / "model.safetensors.index.json"
    if index.exists():
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    else:
        files = [p.name for p in sorted(directory.glob("*.safetensors"))]
    if not files:
        raise ValueError(f"{directory}: no .safetensors files")
    sd: Dict[str, torch.Tensor] = {}
    for name in files:
        sd.update(load_file(str(directory / name)))
    return sd


def config_from_hf(cfg: Mapping, **overrides) -> LlamaConfig:
    if cfg.get("model_type", "llama") != "llama":
        raise ValueError(f"config.json: model_type {cfg.get('model_type')!r} is not a Llama")
    scaling = cfg.get("rope_scaling") or None
    if scaling is not None:
        kind = scaling.get("rope_type", scaling.get("type"))
        odd = {k: scaling.get(k) for k, v in _ROPE_SCALING_FIXED.items() if scaling.get(k, v) != v}
        if kind != "llama3" or odd:
            raise ValueError(f"config.json: rope_scaling {scaling} is not supported (only "
                             f"Llama 3.1's llama3 scaling with {_ROPE_SCALING_FIXED})")
    n_heads = int(cfg["num_attention_heads"])
    fields = dict(dim=int(cfg["hidden_size"]), hidden_dim=int(cfg["intermediate_size"]),
                  n_layers=int(cfg["num_hidden_layers"]), n_heads=n_heads,
                  n_kv_heads=int(cfg.get("num_key_value_heads") or n_heads),
                  vocab_size=int(cfg["vocab_size"]), norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
                  rope_theta=float(cfg.get("rope_theta", 10000.0)),
                  use_scaled_rope=scaling is not None,
                  rope_scale_factor=float((scaling or {}).get("factor", 8.0)),
                  shared_classifier=bool(cfg.get("tie_word_embeddings", False)))
    fields.update(overrides)
    return LlamaConfig(**fields)


def load_hf_llama(directory: PathLike, **overrides) -> Llama:
    """A Llama from a Hugging Face LlamaForCausalLM directory (config.json
    and safetensors)."""
    directory = Path(directory)
    if directory.is_file():
        directory = directory.parent
    cfg = json.loads((directory / "config.json").read_text())
    config = config_from_hf(cfg, **overrides)
    hf = _read_safetensors(directory)
    names = {"model.embed_tokens.weight": "tok_embeddings.weight",
             "model.norm.weight": "norm.weight", "lm_head.weight": "output.weight"}
    per_layer = {"self_attn.q_proj": "attention.wq", "self_attn.k_proj": "attention.wk",
                 "self_attn.v_proj": "attention.wv", "self_attn.o_proj": "attention.wo",
                 "mlp.gate_proj": "feed_forward.w1", "mlp.down_proj": "feed_forward.w2",
                 "mlp.up_proj": "feed_forward.w3", "input_layernorm": "attention_norm",
                 "post_attention_layernorm": "ffn_norm"}
    sd: Dict[str, torch.Tensor] = {}
    for name, tensor in hf.items():
        if name.endswith("rotary_emb.inv_freq"):
            continue
        if name in names:
            sd[names[name]] = tensor
            continue
        parts = name.split(".")  # model.layers.{i}.{module}.{proj}.weight
        if len(parts) < 5 or parts[:2] != ["model", "layers"]:
            raise ValueError(f"{directory}: unexpected weight {name}")
        module = ".".join(parts[3:-1])
        if module not in per_layer:
            raise ValueError(f"{directory}: unexpected weight {name}")
        ours = f"layers.{parts[2]}.{per_layer[module]}.{parts[-1]}"
        if module == "self_attn.q_proj":
            tensor = hf_unpermute(tensor, config.n_heads)
        elif module == "self_attn.k_proj":
            tensor = hf_unpermute(tensor, config.n_kv_heads)
        sd[ours] = tensor
    if config.shared_classifier:
        sd.pop("output.weight", None)
    return _finish(config, sd, str(directory))


def load_checkpoint(path: PathLike, params: Optional[PathLike] = None, **overrides) -> nn.Module:
    """Any of the formats above, told apart by the path: a directory or
    .safetensors file is Hugging Face's, .bin is llama2.c's, a .pth/.pt with
    params.json is Meta's, one holding "model_args" nanoGPT's."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"checkpoint {path} does not exist")
    if path.is_dir() or path.suffix == ".safetensors":
        return load_hf_llama(path, **overrides)
    if path.suffix == ".bin":
        from torchlight.llm.llama2c import load_llama2c
        return load_llama2c(path, **overrides)
    if params is not None:
        return load_meta_llama(path, params, **overrides)
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(checkpoint, Mapping) and "model_args" in checkpoint:
        from torchlight.llm.gpt_weights import load_nanogpt_checkpoint
        gpt_fields = {k: v for k, v in overrides.items()
                      if k in ("use_custom_op", "max_batch")}
        return load_nanogpt_checkpoint(checkpoint, **gpt_fields)
    raise ValueError(f"{path}: a Meta checkpoint needs its params.json (-p/--params)")
