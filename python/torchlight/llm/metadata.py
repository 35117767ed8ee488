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
