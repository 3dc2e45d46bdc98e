"""The Llama 3 tokenizer, rebuilt from llama.cpp's vocabulary file, for MaskBench's token protocol.

    python benchmarks/llama3_tokenizer.py      # build (once) and check against llama.cpp's test strings

MaskBench tokenizes with Llama 3's tokenizer. The official one sits behind a licence gate on the
Hugging Face hub; llama.cpp ships the same vocabulary as `ggml-vocab-llama-bpe.gguf` (in the
llama-cpp-python sdist, fetched by `constrain/vocab_files.py`), and transformers rebuilds a tokenizer
from it. That rebuild differs from the official tokenizer in three ways (DESIGN §7), fixed here:

- the BPE model must have `ignore_merges: true` (a word that is a whole vocabulary entry is one
  token without applying merges; otherwise words such as " Việt" split differently);
- transformers appends an extra added token 128256 (`<|endoftext|>`) that Llama 3 does not have;
- the instruct models end a turn with `<|eot_id|>` (128009), which is the EOS to use.

The fixed `tokenizer.json` folder is cached under `~/.cache/constrain/llama3-tokenizer/` (or
`$CONSTRAIN_CACHE`), so later loads take about a second. With the fixes, all 47 of llama.cpp's
test strings for llama-bpe tokenize to the expected ids (`check()`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

try:
    from constrain import vocab_files  # fetches llama.cpp's vocabulary files into the cache
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from constrain import vocab_files

NAME = "llama-bpe"
EOT_ID = 128009  # <|eot_id|>
EOT = "<|eot_id|>"
N_VOCAB = 128256  # ids 0..128255: 128000 BPE tokens and 256 special tokens


def _folder() -> Path:
    import transformers

    return vocab_files.cache_dir() / "llama3-tokenizer" / f"transformers-{transformers.__version__}"


def _build(folder: Path) -> None:
    """Rebuild from the GGUF (through the cached transformers build the tests share), fix, and save."""
    base = vocab_files.transformers_tokenizer(NAME)
    folder.mkdir(parents=True, exist_ok=True)
    base.save_pretrained(folder)
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["ignore_merges"] = True
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["id"] < N_VOCAB]
    if max(spec["model"]["vocab"].values()) >= N_VOCAB:
        raise RuntimeError(f"{NAME}: the BPE vocabulary runs past id {N_VOCAB - 1}")
    (folder / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["eos_token"] = EOT
    config.pop("added_tokens_decoder", None)  # regenerated from tokenizer.json on load
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def load():
    """The fixed Llama 3 tokenizer (a transformers fast tokenizer), built and cached on first use."""
    from transformers import AutoTokenizer

    folder = _folder()
    done = folder / ".complete"
    if not done.is_file():
        _build(folder)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        _verify(tokenizer)
        done.write_text("")
    else:
        tokenizer = AutoTokenizer.from_pretrained(folder)
    return tokenizer


def _verify(tokenizer) -> None:
    if len(tokenizer) != N_VOCAB:
        raise RuntimeError(f"rebuilt Llama 3 tokenizer has {len(tokenizer)} tokens, not {N_VOCAB}")
    if tokenizer.eos_token_id != EOT_ID:
        raise RuntimeError(f"rebuilt Llama 3 tokenizer has EOS {tokenizer.eos_token_id}, not {EOT_ID}")
    bad = check(tokenizer)
    if bad:
        text, want, got = bad[0]
        raise RuntimeError(f"rebuilt Llama 3 tokenizer differs from llama.cpp on {len(bad)} test strings, "
                           f"first {text!r}: expected {want}, got {got}")


def check(tokenizer) -> list[tuple[str, list[int], list[int]]]:
    """llama.cpp's llama-bpe test strings that do not tokenize to the expected ids: (text, expected, got)."""
    bad = []
    for text, want in vocab_files.llama_cpp_vocab_cases(NAME):
        got = tokenizer.encode(text, add_special_tokens=False)
        if got != want:
            bad.append((text, want, got))
    return bad


def main() -> int:
    tokenizer = load()
    cases = vocab_files.llama_cpp_vocab_cases(NAME)
    bad = check(tokenizer)
    print(f"Llama 3 tokenizer in {_folder()}: {len(tokenizer)} tokens, EOS {tokenizer.eos_token!r} "
          f"({tokenizer.eos_token_id}); llama.cpp test strings: {len(cases) - len(bad)}/{len(cases)} match")
    for text, want, got in bad:
        print(f"  {text!r}: expected {want}, got {got}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
