"""The vocabularies the tests prove Vocabulary on; fetching them is the library's (constrain.vocab_files)."""

from constrain.vocab_files import (  # noqa: F401  (the names the tests use, in one place)
    VocabularyUnavailable,
    cache_dir,
    llama_cpp_vocab_cases,
    llama_cpp_vocab_names,
    transformers_tokenizer,
    vocabulary_path,
)

# Byte-level BPE, SentencePiece, and a whole model.
TEST_VOCABULARIES = ("llama-bpe", "qwen2", "gpt-2", "llama-spm", "phi-3", "gemma-4", "smollm2")
