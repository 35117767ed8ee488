"""Metadata methods for LLM programs: what the C++ runner reads from a .pte
besides the forward method.

    program = torchlight.to_edge(export_llm(model),
                                 constant_methods=llm_metadata_methods(model, tokenizer="bytes"))

Each entry becomes a method with no inputs that returns constants:

    get_max_seq_len() -> Int      positions in the KV cache
    get_vocab_size()  -> Int      logits per token
    get_bos_id()      -> Int      only when bos_id is given (-1: the model takes no BOS)
    get_eos_ids()     -> Int...   only when eos_ids is non-empty (one output each)
    get_tokenizer()   -> String   only when tokenizer is given: "bytes", or a tokenizer
                                  file name the runner looks for beside the .pte

All are optional for the runner (extension/llm/runner/llm_metadata.h): it
falls back to the tokenizer's BOS/EOS and to the forward method's shapes.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Union

from torch import nn

MAX_SEQ_LEN = "get_max_seq_len"
VOCAB_SIZE = "get_vocab_size"
BOS_ID = "get_bos_id"
EOS_IDS = "get_eos_ids"
TOKENIZER = "get_tokenizer"


def llm_metadata_methods(model: nn.Module, bos_id: Optional[int] = None,
                         eos_ids: Iterable[int] = (),
                         tokenizer: Optional[str] = None) -> Dict[str, Union[int, str, list]]:
    """The constant methods describing `model` (a GPT or Llama, or anything
    with `max_seq_len` and `config.vocab_size`), for to_edge's
    constant_methods. Raises ValueError for ids outside the vocabulary."""
    vocab = int(model.config.vocab_size)
    max_seq_len = int(model.max_seq_len)
    if max_seq_len < 1 or vocab < 1:
        raise ValueError(f"llm_metadata_methods: max_seq_len {max_seq_len} and vocab_size "
                         f"{vocab} must be positive")
    methods: Dict[str, Union[int, str, list]] = {MAX_SEQ_LEN: max_seq_len, VOCAB_SIZE: vocab}
    if bos_id is not None:
        if not -1 <= int(bos_id) < vocab:
            raise ValueError(f"llm_metadata_methods: bos_id {bos_id} is outside the "
                             f"vocabulary of {vocab} (-1 means no BOS)")
        methods[BOS_ID] = int(bos_id)
    eos = [int(i) for i in eos_ids]
    for i in eos:
        if not 0 <= i < vocab:
            raise ValueError(f"llm_metadata_methods: EOS id {i} is outside the vocabulary "
                             f"of {vocab}")
    if eos:
        methods[EOS_IDS] = eos
    if tokenizer is not None:
        if not tokenizer:
            raise ValueError("llm_metadata_methods: tokenizer must not be empty")
        methods[TOKENIZER] = str(tokenizer)
    return methods


# The names upstream ExecuTorch's export_llama writes besides the ones above.
MAX_CONTEXT_LEN = "get_max_context_len"
N_LAYERS = "get_n_layers"
USE_KV_CACHE = "use_kv_cache"
USE_SDPA_WITH_KV_CACHE = "use_sdpa_with_kv_cache"
ENABLE_DYNAMIC_SHAPE = "enable_dynamic_shape"


def upstream_llm_metadata(model: nn.Module, bos_id: int, eos_ids: Iterable[int],
                          use_kv_cache: bool, use_sdpa_with_kv_cache: bool,
                          enable_dynamic_shape: bool,
                          overrides: Optional[Dict[str, Union[int, bool, list]]] = None
                          ) -> Dict[str, Union[int, str, list, bool]]:
    """The constant methods upstream's export_llama writes: get_bos_id,
    get_eos_ids, get_max_seq_len, get_max_context_len, get_n_layers,
    get_vocab_size (Int / Ints) and use_kv_cache, use_sdpa_with_kv_cache,
    enable_dynamic_shape (Bool). `overrides` (its --metadata JSON) replace
    or add entries. Raises ValueError as llm_metadata_methods does."""
    methods: Dict[str, Union[int, str, list, bool]] = dict(
        llm_metadata_methods(model, bos_id=bos_id, eos_ids=eos_ids))
    methods[MAX_CONTEXT_LEN] = int(model.max_seq_len)
    methods[N_LAYERS] = int(getattr(model.config, "n_layers", getattr(model.config, "n_layer", 0)))
    methods[USE_KV_CACHE] = bool(use_kv_cache)
    methods[USE_SDPA_WITH_KV_CACHE] = bool(use_sdpa_with_kv_cache)
    methods[ENABLE_DYNAMIC_SHAPE] = bool(enable_dynamic_shape)
    for name, value in (overrides or {}).items():
        if name == EOS_IDS and isinstance(value, int):
            value = [value]
        methods[name] = value
    return methods
