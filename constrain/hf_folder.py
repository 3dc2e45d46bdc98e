"""A Hugging Face model folder made from a GGUF file, for servers that load folders only (vLLM).

transformers de-quantises a GGUF (``from_pretrained(folder, gguf_file=...)``) but refuses to save
the model it loaded that way; a model made from the same config with that state dict saves. No
network: everything comes from the GGUF file (SmolLM2-135M-Instruct: ~540 MB in float32, seconds).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def hf_folder_from_gguf(gguf: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Write (once) and return ``out``: config, float32 weights and tokenizer from ``gguf``."""
    gguf, out = Path(gguf), Path(out)
    if (out / "config.json").is_file() and any(out.glob("*.safetensors")):
        return out
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    config.__dict__.pop("quantization_config", None)  # the weights saved are plain float32
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    part = out.with_name(out.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    model.save_pretrained(str(part))
    tokenizer.save_pretrained(str(part))
    shutil.rmtree(out, ignore_errors=True)
    part.rename(out)
    return out
