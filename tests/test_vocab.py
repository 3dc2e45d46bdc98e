"""Vocabulary: token ids to bytes for real tokenizers, special tokens, EOS ids, padding, pickling."""

import functools
import pickle
import sys
from types import SimpleNamespace

import pytest

import vocabularies
from automaton.vocab import Vocabulary

# The EOS ids each test vocabulary must have: its own EOS plus the chat end tokens it holds.
EXPECTED_EOS = {
    "llama-bpe": {128001, 128009},   # <|end_of_text|>, <|eot_id|>
    "qwen2": {151643, 151645},       # <|endoftext|>, <|im_end|>
    "gpt-2": {50256},                # <|endoftext|>
    "llama-spm": {2},                # </s>
    "phi-3": {32000, 32007},         # <|endoftext|>, <|end|>
    "gemma-4": {1, 106},             # <eos>, <turn|>
    "smollm2": {0, 2},               # <|endoftext|>, <|im_end|>
}
# Vocabularies whose tokenizer writes "▁" before the first word: their bytes for a whole text
# start with one space more than the text.
SPACE_PREFIX = {"llama-spm", "phi-3"}
LLAMA_CPP_NAMES = [n for n in vocabularies.TEST_VOCABULARIES if n != "smollm2"]
# transformers' tokenizers rebuilt from GGUF hold tokens the real ones lack: Llama 3 one extra
# token past the model (128256), Phi-3 llama.cpp's 53 "[PADnnnnn]" placeholders (ids 32011 to
# 32063, type unknown in the GGUF) as ordinary text. The real tokenizers stop here, and the model
# pads its logits to the GGUF's size.
REAL_TOKENIZER_LENGTH = {"llama-bpe": 128256, "phi-3": 32011}
# Token ids by kind in each GGUF: "ordinary" is normal (1) and byte (6) tokens.
ORDINARY = (1, 6)


def _gguf_types(path):
    from automaton.vocab import _read_gguf_metadata

    meta = _read_gguf_metadata(path, {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"})
    return meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]


def _tokenizer_or_skip(name):
    pytest.importorskip("transformers")
    try:
        return _transformers_tokenizer(name)
    except vocabularies.VocabularyUnavailable as exc:
        pytest.skip(str(exc))


@functools.lru_cache(maxsize=None)
def _transformers_tokenizer(name):
    return vocabularies.transformers_tokenizer(name)


def test_llama_cpp_sdist_has_every_named_vocabulary(gguf_path_by_name):
    """The pinned llama-cpp-python sdist ships each vocabulary the tests name, with its test strings."""
    gguf_path_by_name("gpt-2")
    names = vocabularies.llama_cpp_vocab_names()
    assert set(LLAMA_CPP_NAMES) <= set(names), names
    for name in LLAMA_CPP_NAMES:
        assert len(vocabularies.llama_cpp_vocab_cases(name)) >= 40


@pytest.mark.parametrize("name", LLAMA_CPP_NAMES)
def test_token_bytes_spell_llama_cpp_test_strings(name, vocabulary_by_name):
    """For each of llama.cpp's test strings, our bytes of its expected token ids are its UTF-8."""
    vocab = vocabulary_by_name(name)
    cases = vocabularies.llama_cpp_vocab_cases(name)
    assert cases
    for text, ids in cases:
        spelled = b"".join(vocab.token_bytes[i] for i in ids)
        want = text.encode("utf-8")
        if name in SPACE_PREFIX and want:
            assert spelled == b" " + want, (text, ids)
        else:
            assert spelled == want, (text, ids)


def test_smollm2_bytes_spell_what_its_tokenizer_encodes(vocabulary_by_name):
    """SmolLM2 (no llama.cpp test file): our bytes of transformers' encoding give back each test string."""
    vocab = vocabulary_by_name("smollm2")
    tokenizer = _tokenizer_or_skip("smollm2")
    texts = [text for text, _ in vocabularies.llama_cpp_vocab_cases("llama-bpe")]
    texts += ['{"destination": "Lençóis Maranhenses", "days": 3}', "naïve café 😀 \t\n"]
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert b"".join(vocab.token_bytes[i] for i in ids) == text.encode("utf-8"), text


@pytest.mark.parametrize("name", vocabularies.TEST_VOCABULARIES)
def test_from_transformers_agrees_with_from_gguf(name, vocabulary_by_name, gguf_path_by_name):
    """transformers' tokenizer rebuilt from the GGUF gives the same bytes on every ordinary token."""
    from_gguf = vocabulary_by_name(name)
    tokenizer = _tokenizer_or_skip(name)
    pieces, types = _gguf_types(gguf_path_by_name(name))
    real = Vocabulary.from_transformers(tokenizer, vocab_size=REAL_TOKENIZER_LENGTH.get(name, len(pieces)))
    vocab = Vocabulary(real.token_bytes[:real.n_tokens], real.eos_ids, size=len(pieces))
    ordinary = [i for i, t in enumerate(types) if t in ORDINARY]
    differ = [(i, pieces[i], vocab.token_bytes[i], from_gguf.token_bytes[i])
              for i in ordinary if vocab.token_bytes[i] != from_gguf.token_bytes[i]]
    assert not differ, differ[:10]
    # Every other token id of the GGUF (control, user-defined, ...) never matches text in either.
    others = [i for i, t in enumerate(types) if t not in ORDINARY and vocab.token_bytes[i] is not None]
    assert not others, [(i, pieces[i]) for i in others[:10]]
    assert vocab.eos_ids == from_gguf.eos_ids == EXPECTED_EOS[name]


@pytest.mark.parametrize("name", vocabularies.TEST_VOCABULARIES)
def test_whole_utf8_tokens_decode_as_the_tokenizer_decodes_them(name, vocabulary_by_name):
    """Where a token holds whole UTF-8 scalars, its bytes are what tokenizer.decode([id]) writes."""
    vocab = vocabulary_by_name(name)
    tokenizer = _tokenizer_or_skip(name)
    ids = [i for i, b in enumerate(vocab.token_bytes) if b is not None]
    decoded = tokenizer.batch_decode([[i] for i in ids], clean_up_tokenization_spaces=False)
    differ = []
    for i, text in zip(ids, decoded):
        try:
            ours = vocab.token_bytes[i].decode("utf-8")
        except UnicodeDecodeError:
            continue  # part of a scalar: the tokenizer writes U+FFFD for it alone
        # SentencePiece decoders drop the space "▁" gives the first token of a text.
        if text != ours and not (ours.startswith(" ") and text == ours[1:]):
            differ.append((i, ours, text))
    assert not differ, differ[:10]


@pytest.mark.parametrize("name", vocabularies.TEST_VOCABULARIES)
def test_special_tokens_never_match_text(name, vocabulary_by_name, gguf_path_by_name):
    """Control, unknown, unused and user-defined tokens are None and listed in special_ids; EOS is right."""
    vocab = vocabulary_by_name(name)
    pieces, types = _gguf_types(gguf_path_by_name(name))
    special = {i for i, t in enumerate(types) if t not in ORDINARY}
    assert all(vocab.token_bytes[i] is None for i in special)
    assert vocab.special_ids == special
    assert vocab.eos_ids == EXPECTED_EOS[name]
    assert vocab.eos_ids <= vocab.special_ids
    assert vocab.size == vocab.n_tokens == len(pieces)


def test_llama3_special_tokens_and_eot(vocabulary_by_name):
    """Llama 3: <|begin_of_text|>, headers and reserved tokens are None; <|eot_id|> 128009 is EOS."""
    vocab = vocabulary_by_name("llama-bpe")
    assert 128009 in vocab.eos_ids and 128001 in vocab.eos_ids
    for i in (128000, 128006, 128007, 128255):
        assert vocab.token_bytes[i] is None and i in vocab.special_ids
    assert vocab.token_bytes[128000 - 1] is not None


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "smollm2"])
def test_byte_level_tokens_cover_every_byte_and_split_scalars(name, vocabulary_by_name):
    """Byte-level BPE: each byte value is a one-byte token, and some tokens hold part of a UTF-8 scalar."""
    vocab = vocabulary_by_name(name)
    single = {b for b in vocab.token_bytes if b is not None and len(b) == 1}
    if name == "smollm2":
        # Trained without 6 control characters, the lead bytes of planes 4 to 11 (F1, F2), and
        # bytes UTF-8 never uses: such scalars are not writable raw, only as JSON escapes.
        missing = {0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100)}
        assert single == {bytes([i]) for i in range(256) if i not in missing}
    else:
        assert single == {bytes([i]) for i in range(256)}
    partial = [b for b in vocab.token_bytes if b is not None and not _is_utf8(b)]
    assert partial


def test_gpt2_rocket_is_three_tokens_of_one_scalar(vocabulary_by_name):
    """GPT-2 spells "🚀" as three tokens, each a piece of its four UTF-8 bytes."""
    vocab = vocabulary_by_name("gpt-2")
    pieces = [vocab.token_bytes[i] for i in (8582, 248, 222)]
    assert b"".join(pieces) == "🚀".encode()
    assert not any(_is_utf8(p) for p in pieces)


@pytest.mark.parametrize("name,first", [("llama-spm", 3), ("phi-3", 3), ("gemma-4", 238)])
def test_sentencepiece_byte_fallback_tokens(name, first, vocabulary_by_name):
    """SentencePiece byte fallback: <0x00> to <0xFF> are one raw byte each, in order."""
    vocab = vocabulary_by_name(name)
    assert [vocab.token_bytes[first + b] for b in range(256)] == [bytes([b]) for b in range(256)]


def test_sentencepiece_space_marker_is_a_space(vocabulary_by_name):
    """SentencePiece's "▁" is a space: Llama 2's token for "▁the" writes b" the"."""
    vocab = vocabulary_by_name("llama-spm")
    assert vocab.token_bytes[278] == b" the"
    assert all(b is None or "▁".encode() not in b for b in vocab.token_bytes)


def test_padded_ids_are_never_text(vocabulary_by_name):
    """A model wider than its tokenizer (Qwen2 7B: 152064 logits over 151936 tokens): the extra ids are None."""
    base = vocabulary_by_name("qwen2")
    vocab = Vocabulary(base.token_bytes, base.eos_ids, size=152064)
    assert vocab.size == len(vocab) == len(vocab.token_bytes) == 152064
    assert vocab.n_tokens == 151936
    assert all(b is None for b in vocab.token_bytes[151936:])
    assert vocab.special_ids == base.special_ids  # padding is not a token of the tokenizer
    assert vocab != base


def test_llama3_from_transformers_with_model_drops_the_extra_token(vocabulary_by_name):
    """transformers' rebuilt Llama 3 has one token too many: the model's vocab_size cuts it; EOS from the model."""
    tokenizer = _tokenizer_or_skip("llama-bpe")
    assert len(tokenizer) == 128257
    model = SimpleNamespace(config=SimpleNamespace(vocab_size=128256),
                            generation_config=SimpleNamespace(eos_token_id=[128001, 128008, 128009]))
    vocab = Vocabulary.from_transformers(tokenizer, model=model)
    assert vocab.size == 128256
    assert vocab.eos_ids == {128001, 128008, 128009}
    assert Vocabulary(vocab.token_bytes, vocabulary_by_name("llama-bpe").eos_ids) == vocabulary_by_name("llama-bpe")


def test_explicit_eos_ids_replace_the_found_ones(gguf_path_by_name):
    """eos_ids given by the caller are the EOS ids, nothing added."""
    vocab = Vocabulary.from_gguf(gguf_path_by_name("llama-bpe"), eos_ids=[128009])
    assert vocab.eos_ids == {128009}
    assert vocab.token_bytes[128001] is None  # still a control token


def test_pickle_round_trip_is_equal_and_compact(vocabulary_by_name):
    """A Vocabulary pickles to its packed bytes and comes back equal, fingerprint and all."""
    vocab = vocabulary_by_name("llama-bpe")
    data = pickle.dumps(vocab)
    text = sum(len(b) for b in vocab.token_bytes if b is not None)
    assert len(data) < text + 4 * vocab.size + 10_000
    back = pickle.loads(data)
    assert back == vocab and back.fingerprint() == vocab.fingerprint()
    assert back.token_bytes == vocab.token_bytes
    assert back.eos_ids == vocab.eos_ids and back.special_ids == vocab.special_ids
    assert (back.size, back.n_tokens) == (vocab.size, vocab.n_tokens)


def test_fingerprint_tells_bytes_and_eos_apart():
    """The fingerprint changes with any token's bytes or the EOS ids, not with how it was built."""
    base = Vocabulary([b"a", b"b", None], {2})
    assert Vocabulary([b"a", b"b", None], [2]) == base
    assert Vocabulary([b"a", b"b", None], [2]).fingerprint() == base.fingerprint()
    assert Vocabulary([b"a", b"c", None], {2}).fingerprint() != base.fingerprint()
    assert Vocabulary([b"ab", None, None], {2}).fingerprint() != base.fingerprint()
    assert Vocabulary([b"a", b"b", None], set()).fingerprint() != base.fingerprint()
    assert Vocabulary([b"a", b"b", None], {2}, size=4).fingerprint() != base.fingerprint()
    assert len({base, Vocabulary([b"a", b"b", None], {2})}) == 1


def test_constructor_checks_its_input():
    """Bytes or None only, EOS inside the vocabulary; EOS and empty tokens never write text."""
    with pytest.raises(TypeError, match="token 1 must be bytes or None"):
        Vocabulary([b"a", "b"], [])
    with pytest.raises(ValueError, match=r"EOS ids \[5\]"):
        Vocabulary([b"a", b"b"], [5])
    vocab = Vocabulary([b"a", b"", b"eos"], [2])
    assert vocab.token_bytes == [b"a", None, None]
    assert vocab.special_ids == {1, 2}


def test_non_tokenizers_are_refused_with_a_type_error():
    """from_transformers and from_llama name what they expected when given something else."""
    with pytest.raises(TypeError, match="expects a transformers tokenizer"):
        Vocabulary.from_transformers("gpt2")
    with pytest.raises(TypeError, match="expects a transformers tokenizer"):
        Vocabulary.from_transformers({"a": 0})
    if _has("llama_cpp"):
        with pytest.raises(TypeError, match="expects a llama_cpp.Llama"):
            Vocabulary.from_llama(object())


def test_from_llama_without_llama_cpp_says_how_to_install(monkeypatch):
    """Without llama-cpp-python, from_llama raises an ImportError naming the package."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ImportError, match="pip install llama-cpp-python"):
        Vocabulary.from_llama(object())


def test_not_a_gguf_file_is_a_value_error(tmp_path):
    """A file that is not GGUF (or is cut short) is refused with a ValueError naming it."""
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04 not gguf at all")
    with pytest.raises(ValueError, match="is not a GGUF file"):
        Vocabulary.from_gguf(bad)
    bad.write_bytes(b"")
    with pytest.raises(ValueError, match="is not a GGUF file"):
        Vocabulary.from_gguf(bad)
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 8 + b"\x05" + b"\x00" * 7)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        Vocabulary.from_gguf(bad)


def test_our_gguf_reader_agrees_with_the_gguf_package(gguf_path_by_name):
    """The metadata reader here gives the same tokens, types and ids as gguf.GGUFReader (Llama 2's file)."""
    gguf = pytest.importorskip("gguf")
    from automaton.vocab import _read_gguf_metadata

    path = gguf_path_by_name("llama-spm")
    keys = {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
            "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.scores"}
    ours = _read_gguf_metadata(path, keys)
    fields = gguf.GGUFReader(path).fields
    for key in keys:
        theirs = fields[key].contents()
        if key == "tokenizer.ggml.scores":
            assert ours[key] == pytest.approx(theirs)
        else:
            assert ours[key] == theirs, key


def test_byte_level_and_sentencepiece_are_told_from_the_tokenizer():
    """Tiny tokenizers built in memory: a ByteLevel decoder, a ▁ + ByteFallback decoder, and WordPiece refused."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    from tokenizers import decoders, models

    def fast(model, decoder, **special):
        tok = tokenizers.Tokenizer(model)
        tok.decoder = decoder
        return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", **special)

    vocab = {"Ġa": 0, "Ċ": 1, "ðŁ": 2, "</s>": 3, "<|im_end|>": 4, "b": 5}
    tok = fast(models.BPE(vocab, []), decoders.ByteLevel())
    tok.add_special_tokens({"additional_special_tokens": ["<|im_end|>"]})
    v = Vocabulary.from_transformers(tok)
    assert v.token_bytes == [b" a", b"\n", b"\xf0\x9f", None, None, b"b"]
    assert v.eos_ids == {3, 4}

    pieces = {"<unk>": 0, "</s>": 1, "<0x0A>": 2, "▁a": 3, "a▁b": 4, "<|end|>": 5}
    spm = models.BPE(pieces, [], unk_token="<unk>", byte_fallback=True)
    decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok = fast(spm, decoder, unk_token="<unk>")
    tok.add_tokens(["<|end|>"])  # an added token that is not special: still never text
    v = Vocabulary.from_transformers(tok)
    assert v.token_bytes == [None, None, b"\n", b" a", b"a b", None]
    assert v.eos_ids == {1, 5}

    wordpiece = fast(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"), decoders.WordPiece())
    with pytest.raises(ValueError, match="cannot tell how"):
        Vocabulary.from_transformers(wordpiece)


@pytest.mark.parametrize("name", vocabularies.TEST_VOCABULARIES)
def test_from_llama_agrees_with_from_gguf(name, vocabulary_by_name, gguf_path_by_name):
    """llama.cpp's own rendering of every token (vocab-only Llama) equals ours; its EOG ids include ours.

    llama.cpp also ends generation on a few more tokens, which it then never renders as text:
    Qwen2's ordinary "</s>" (128247) among them, so from_llama drops it as llama.cpp does.
    """
    llama_cpp = pytest.importorskip("llama_cpp")
    llm = llama_cpp.Llama(model_path=str(gguf_path_by_name(name)), vocab_only=True, verbose=False)
    vocab = Vocabulary.from_llama(llm)
    ours = vocabulary_by_name(name)
    assert vocab.size == ours.size
    differ = [(i, vocab.token_bytes[i], ours.token_bytes[i]) for i in range(ours.size)
              if vocab.token_bytes[i] != ours.token_bytes[i] and i not in vocab.eos_ids]
    assert not differ, differ[:10]
    assert ours.eos_ids <= vocab.eos_ids
    assert vocab.eos_ids - ours.eos_ids <= vocab.special_ids


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
