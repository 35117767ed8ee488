"""llama2.c checkpoints in the legacy (version 0) `.bin` format.

Layout, little-endian:

    header, 7 x int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads,
                       vocab_size (negative: the classifier is not shared
                       with the token embedding), seq_len
    float32 arrays, each a torch Linear weight in its [out, in] layout, and
    each per-layer array holding all layers one after another:
        token_embedding  [vocab_size, dim]
        rms_att          [n_layers, dim]
        wq               [n_layers, n_heads * head_dim, dim]
        wk               [n_layers, n_kv_heads * head_dim, dim]
        wv               [n_layers, n_kv_heads * head_dim, dim]
        wo               [n_layers, dim, n_heads * head_dim]
        rms_ffn          [n_layers, dim]
        w1               [n_layers, hidden_dim, dim]
        w2               [n_layers, dim, hidden_dim]
        w3               [n_layers, hidden_dim, dim]
        rms_final        [dim]
        freq_cis_real    [seq_len, head_dim / 2]   cos of the RoPE angles
        freq_cis_imag    [seq_len, head_dim / 2]   sin of the RoPE angles
        wcls             [vocab_size, dim]          only when not shared

head_dim = dim / n_heads. The RoPE tables are not needed (the model computes
them with theta 10000, as llama2.c's run.c does) but are read and written.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Dict, List, Tuple, Union

import numpy as np
import torch

from torchlight.llm.llama import Llama, LlamaConfig, rope_frequencies

HEADER = struct.Struct("<7i")
# Files from llama2.c's newer export versions start with this magic ("ak42").
VERSIONED_MAGIC = 0x616B3432

PathLike = Union[str, Path]


def _layout(config: LlamaConfig) -> List[Tuple[str, Tuple[int, ...]]]:
    """(section name, shape) of each float32 array, in file order."""
    d, hd, n = config.dim, config.hidden_dim, config.n_layers
    head = config.head_dim
    sections = [
        ("token_embedding", (config.vocab_size, d)),
        ("rms_att", (n, d)),
        ("wq", (n, config.n_heads * head, d)),
        ("wk", (n, config.n_kv_heads * head, d)),
        ("wv", (n, config.n_kv_heads * head, d)),
        ("wo", (n, d, config.n_heads * head)),
        ("rms_ffn", (n, d)),
        ("w1", (n, hd, d)),
        ("w2", (n, d, hd)),
        ("w3", (n, hd, d)),
        ("rms_final", (d,)),
        ("freq_cis_real", (config.max_seq_len, head // 2)),
        ("freq_cis_imag", (config.max_seq_len, head // 2)),
    ]
    if not config.shared_classifier:
        sections.append(("wcls", (config.vocab_size, d)))
    return sections


# Per-layer sections and the model parameter each layer's slice becomes.
_LAYER_PARAMS = {
    "rms_att": "attention_norm.weight", "wq": "attention.wq.weight",
    "wk": "attention.wk.weight", "wv": "attention.wv.weight", "wo": "attention.wo.weight",
    "rms_ffn": "ffn_norm.weight", "w1": "feed_forward.w1.weight",
    "w2": "feed_forward.w2.weight", "w3": "feed_forward.w3.weight",
}


def config_from_header(values: Tuple[int, ...]) -> LlamaConfig:
    """LlamaConfig from the 7 header ints; ValueError on impossible values."""
    dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len = values
    if dim == VERSIONED_MAGIC:
        raise ValueError("llama2.c checkpoint starts with the magic 'ak42' of the versioned "
                         "format; only the legacy (version 0) format is supported")
    named = dict(dim=dim, hidden_dim=hidden_dim, n_layers=n_layers, n_heads=n_heads,
                 n_kv_heads=n_kv_heads, seq_len=seq_len)
    for name, value in named.items():
        if value <= 0:
            raise ValueError(f"llama2.c header: {name} is {value}, expected > 0")
    if vocab_size == 0:
        raise ValueError("llama2.c header: vocab_size is 0")
    if dim % n_heads != 0 or (dim // n_heads) % 2 != 0:
        raise ValueError(f"llama2.c header: dim {dim} is not n_heads {n_heads} times an even "
                         "head size")
    if n_heads % n_kv_heads != 0:
        raise ValueError(f"llama2.c header: n_heads {n_heads} is not a multiple of n_kv_heads "
                         f"{n_kv_heads}")
    return LlamaConfig(dim=dim, hidden_dim=hidden_dim, n_layers=n_layers, n_heads=n_heads,
                       n_kv_heads=n_kv_heads, vocab_size=abs(vocab_size), max_seq_len=seq_len,
                       shared_classifier=vocab_size > 0)


def read_llama2c(path: PathLike) -> Tuple[LlamaConfig, Dict[str, np.ndarray]]:
    """(config, {section name: float32 array}) of a legacy .bin file, sections
    shaped as in the module docstring. ValueError when the header is invalid or
    the file size does not match it."""
    data = Path(path).read_bytes()
    if len(data) < HEADER.size:
        raise ValueError(f"llama2.c checkpoint {path}: {len(data)} bytes, shorter than the "
                         f"{HEADER.size}-byte header")
    config = config_from_header(HEADER.unpack_from(data, 0))
    sections = _layout(config)
    expected = HEADER.size + 4 * sum(int(np.prod(shape)) for _, shape in sections)
    if len(data) != expected:
        raise ValueError(f"llama2.c checkpoint {path}: {len(data)} bytes, the header "
                         f"({config.dim=}, {config.n_layers=}, {config.vocab_size=}, "
                         f"{config.max_seq_len=}) implies {expected}")
    arrays: Dict[str, np.ndarray] = {}
    offset = HEADER.size
    for name, shape in sections:
        count = int(np.prod(shape))
        arrays[name] = np.frombuffer(data, dtype="<f4", count=count, offset=offset).reshape(shape)
        offset += 4 * count
    return config, arrays


def state_dict_from_sections(config: LlamaConfig,
                             arrays: Dict[str, np.ndarray]) -> Dict[str, torch.Tensor]:
    """Llama parameter names -> tensors (copies) for the file's sections."""
    sd: Dict[str, torch.Tensor] = {}

    def tensor(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.array(a, dtype=np.float32))

    sd["tok_embeddings.weight"] = tensor(arrays["token_embedding"])
    for section, param in _LAYER_PARAMS.items():
        for i in range(config.n_layers):
            sd[f"layers.{i}.{param}"] = tensor(arrays[section][i])
    sd["norm.weight"] = tensor(arrays["rms_final"])
    sd["output.weight"] = (sd["tok_embeddings.weight"] if config.shared_classifier
                           else tensor(arrays["wcls"]))
    return sd


def load_llama2c(path: PathLike, **overrides) -> Llama:
    """A Llama holding a legacy llama2.c checkpoint's weights, in eval mode.
    `overrides` set LlamaConfig fields that are not in the file (use_custom_op,
    max_batch, a smaller max_seq_len)."""
    config, arrays = read_llama2c(path)
    for key, value in overrides.items():
        setattr(config, key, value)
    model = Llama(config)
    sd = state_dict_from_sections(config, arrays)
    model.load_state_dict(sd, strict=True)
    model.eval()
    return model


def write_llama2c(path: PathLike, model: Llama) -> None:
    """Writes `model` as a legacy .bin; the classifier is shared (positive
    vocab_size) when output.weight is tok_embeddings.weight."""
    config = model.config
    shared = model.output.weight is model.tok_embeddings.weight
    layers = model.layers

    def stack(get) -> np.ndarray:
        return np.stack([get(layer).detach().float().numpy() for layer in layers])

    cos, sin = rope_frequencies(config.head_dim, config.max_seq_len, config.rope_theta)
    sections = {
        "token_embedding": model.tok_embeddings.weight.detach().float().numpy(),
        "rms_att": stack(lambda l: l.attention_norm.weight),
        "wq": stack(lambda l: l.attention.wq.weight),
        "wk": stack(lambda l: l.attention.wk.weight),
        "wv": stack(lambda l: l.attention.wv.weight),
        "wo": stack(lambda l: l.attention.wo.weight),
        "rms_ffn": stack(lambda l: l.ffn_norm.weight),
        "w1": stack(lambda l: l.feed_forward.w1.weight),
        "w2": stack(lambda l: l.feed_forward.w2.weight),
        "w3": stack(lambda l: l.feed_forward.w3.weight),
        "rms_final": model.norm.weight.detach().float().numpy(),
        "freq_cis_real": cos.numpy(),
        "freq_cis_imag": sin.numpy(),
    }
    if not shared:
        sections["wcls"] = model.output.weight.detach().float().numpy()
    file_config = LlamaConfig(**{**config.to_dict(), "shared_classifier": shared})
    vocab = config.vocab_size if shared else -config.vocab_size
    with open(path, "wb") as f:
        f.write(HEADER.pack(config.dim, config.hidden_dim, config.n_layers, config.n_heads,
                            config.n_kv_heads, vocab, config.max_seq_len))
        for name, shape in _layout(file_config):
            array = np.ascontiguousarray(sections[name], dtype="<f4")
            if array.shape != shape:
                raise ValueError(f"write_llama2c: {name} has shape {list(array.shape)}, "
                                 f"expected {list(shape)}")
            f.write(array.tobytes())
