"""Language models for torchlight: GPT-2 and Llama with a static KV cache.

    from torchlight.llm import GPT, GPTConfig, Llama, LlamaConfig, export_llm, generate

Importing the package defines the custom operator
torchlight::sdpa_with_kv_cache (see custom_ops.py for its schema).
"""

from torchlight.llm import custom_ops
from torchlight.llm.export import export_llm
from torchlight.llm.generate import generate
from torchlight.llm.gpt import GPT, GPTConfig
from torchlight.llm.llama import Llama, LlamaConfig

__all__ = ["GPT", "GPTConfig", "Llama", "LlamaConfig", "custom_ops", "export_llm", "generate"]
