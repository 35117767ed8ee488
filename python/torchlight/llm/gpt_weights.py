"""GPT-2 weights from nanoGPT checkpoints and Hugging Face GPT-2 state dicts.

nanoGPT saves `{"model": state_dict, "model_args": {...}, ...}` with the
names GPT uses; a model trained under torch.compile has every key prefixed by
"_orig_mod.". Hugging Face's GPT2LMHeadModel uses the same names, but its
projections are Conv1D layers whose weights are stored transposed ([in, out]),
GPT2Model drops the "transformer." prefix, and both carry attention-mask
buffers ("attn.bias", "attn.masked_bias") that are not weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple, Union

import torch

from torchlight.llm.gpt import GPT, GPTConfig

# Weights Hugging Face stores as Conv1D [in, out].
_CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
                    "mlp.c_proj.weight")
_MASK_BUFFER_SUFFIXES = (".attn.bias", ".attn.masked_bias")
_COMPILE_PREFIX = "_orig_mod."


def _is_hf_layout(sd: Mapping[str, torch.Tensor]) -> bool:
    """c_attn maps n_embd to 3 * n_embd: stored [3C, C] by nanoGPT, [C, 3C] by HF."""
    rows, cols = sd["transformer.h.0.attn.c_attn.weight"].shape
    if rows == 3 * cols:
        return False
    if cols == 3 * rows:
        return True
    raise ValueError(f"GPT state dict: transformer.h.0.attn.c_attn.weight has shape "
                     f"{[rows, cols]}, expected [3C, C] (nanoGPT) or [C, 3C] (Hugging Face)")


def normalize_gpt_state_dict(state_dict: Mapping[str, torch.Tensor],
                             hf_layout: Optional[bool] = None
                             ) -> Tuple[Dict[str, torch.Tensor], bool]:
    """(a nanoGPT-named, nanoGPT-shaped copy of a nanoGPT or HF GPT-2 state
    dict, whether it was in HF layout).

    Strips "_orig_mod.", adds the "transformer." prefix when missing, drops the
    attention-mask buffers, transposes Conv1D weights (detected from c_attn's
    shape unless `hf_layout` says), and adds lm_head.weight tied to wte when
    absent. Tensors are shared, not copied, where no transpose is needed.
    """
    sd: Dict[str, torch.Tensor] = {}
    for key, value in state_dict.items():
        if key.startswith(_COMPILE_PREFIX):
            key = key[len(_COMPILE_PREFIX):]
        if key.endswith(_MASK_BUFFER_SUFFIXES):
            continue
        if not key.startswith(("transformer.", "lm_head.")):
            key = "transformer." + key
        sd[key] = value
    if "transformer.h.0.attn.c_attn.weight" not in sd:
        raise ValueError("GPT state dict has no transformer.h.0.attn.c_attn.weight; keys start "
                         f"with {sorted(sd)[:4]}")
    if hf_layout is None:
        hf_layout = _is_hf_layout(sd)
    if hf_layout:
        sd = {k: (v.t().contiguous() if k.endswith(_CONV1D_SUFFIXES) else v)
              for k, v in sd.items()}
    if "lm_head.weight" not in sd:
        sd["lm_head.weight"] = sd["transformer.wte.weight"]
    return sd, hf_layout


def gpt_config_from_state_dict(sd: Mapping[str, torch.Tensor], n_head: int,
                               **overrides) -> GPTConfig:
    """GPTConfig with the sizes read off a normalized state dict. The number of
    heads is not visible in the weights, so it is an argument."""
    vocab_size, n_embd = sd["transformer.wte.weight"].shape
    block_size = sd["transformer.wpe.weight"].shape[0]
    n_layer = 0
    while f"transformer.h.{n_layer}.ln_1.weight" in sd:
        n_layer += 1
    fields = dict(vocab_size=vocab_size, n_embd=n_embd, block_size=block_size, n_layer=n_layer,
                  n_head=n_head, bias="transformer.ln_f.bias" in sd)
    fields.update(overrides)
    return GPTConfig(**fields)


def load_gpt_state_dict(state_dict: Mapping[str, torch.Tensor], n_head: int,
                        hf_layout: Optional[bool] = None, **overrides) -> GPT:
    """A GPT holding the weights of a nanoGPT or Hugging Face GPT-2 state dict.

    `overrides` set GPTConfig fields (e.g. block_size to use fewer positions
    than the checkpoint has, use_custom_op). For HF weights the GELU defaults
    to the tanh approximation GPT-2 was trained with. Raises ValueError when
    names or shapes do not match.
    """
    sd, hf_layout = normalize_gpt_state_dict(state_dict, hf_layout)
    if hf_layout:
        overrides.setdefault("gelu_approximate", "tanh")
    config = gpt_config_from_state_dict(sd, n_head, **overrides)
    if config.block_size < sd["transformer.wpe.weight"].shape[0]:
        sd["transformer.wpe.weight"] = sd["transformer.wpe.weight"][: config.block_size]
    model = GPT(config)
    _load_strict(model, sd)
    model.eval()
    return model


def load_nanogpt_checkpoint(checkpoint: Union[str, Path, Mapping], **overrides) -> GPT:
    """A GPT from a nanoGPT checkpoint (a ckpt.pt path or the loaded dict with
    "model" and "model_args"). `overrides` set GPTConfig fields."""
    if not isinstance(checkpoint, Mapping):
        checkpoint = torch.load(checkpoint, map_location="cpu", weights_only=True)
    for key in ("model", "model_args"):
        if key not in checkpoint:
            raise ValueError(f"nanoGPT checkpoint has no '{key}' entry (it has {sorted(checkpoint)})")
    args = dict(checkpoint["model_args"])
    known = set(GPTConfig.__dataclass_fields__)
    fields = {k: v for k, v in args.items() if k in known and k != "n_head"}
    fields.update(overrides)
    return load_gpt_state_dict(checkpoint["model"], n_head=args["n_head"], hf_layout=False,
                               **fields)


def check_weights_fit(model: torch.nn.Module, sd: Mapping[str, torch.Tensor], source: str,
                      may_be_missing: frozenset = frozenset()) -> None:
    """Raises ValueError naming `source` unless `sd` has exactly `model`'s
    entries (but `may_be_missing`) with the model's shapes."""
    own = model.state_dict()
    missing = sorted(set(own) - set(sd) - may_be_missing)
    unexpected = sorted(set(sd) - set(own))
    if missing or unexpected:
        raise ValueError(f"{source}: weights do not fit the model: missing {missing[:8]}, "
                         f"unexpected {unexpected[:8]}")
    for key, value in sd.items():
        if tuple(value.shape) != tuple(own[key].shape):
            raise ValueError(f"{source}: {key} has shape {list(value.shape)}, the model "
                             f"expects {list(own[key].shape)}")


def _load_strict(model: torch.nn.Module, sd: Mapping[str, torch.Tensor]) -> None:
    check_weights_fit(model, sd, "GPT state dict")
    model.load_state_dict(sd, strict=True)
