"""A model's vocabulary as bytes: what text each token id writes, and which ids end generation.

Masks walk token bytes through a byte automaton, so every token must be known as the exact
bytes it appends to the output. Tokenizers store tokens in one of two spellings:

- byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM2): each byte is written as one printable
  character of GPT-2's byte map (space is "Ġ", newline "Ċ"), so a token may hold part of a
  UTF-8 scalar;
- SentencePiece (Llama 2, Phi-3, Gemma): "▁" stands for a space, and byte-fallback tokens
  `<0xNN>` hold one raw byte each.

Only ordinary tokens (and byte tokens) are text. Special and control tokens, added tokens,
unknown and unused tokens, and ids past the tokenizer (a model whose logits are wider than its
tokenizer, padded for speed) are `None`: no mask ever allows them as text. EOS ids are kept apart
in `eos_ids`; a mask allows them only where the text so far is complete.

Sources: a transformers tokenizer, a GGUF file (read here directly: the `gguf` package builds a
numpy view per string and takes tens of seconds on a 150k-token vocabulary), or a
llama-cpp-python `Llama`.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import mmap
import re
import struct
from collections.abc import Iterable, Sequence
from os import PathLike

import numpy as np

__all__ = ["Vocabulary", "CHAT_END_TOKENS"]

# Tokens that end an assistant turn in common chat templates. Each counts as EOS when the
# vocabulary holds it as a special or control token (never when it is plain text).
CHAT_END_TOKENS = (
    "<|im_end|>",        # ChatML: Qwen2, SmolLM2
    "<|eot_id|>",        # Llama 3
    "<|eom_id|>",        # Llama 3.1 tool calls
    "<|end|>",           # Phi-3
    "<end_of_turn>",     # Gemma 1 to 3
    "<turn|>",           # Gemma 4
    "<|endoftext|>",     # GPT-2, Qwen2, Phi-3
)

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SPACE = "\u2581"  # SentencePiece's "▁"


def _gpt2_char_to_byte() -> dict[str, int]:
    """GPT-2's byte map, inverted: printable bytes stand for themselves, the rest from U+0100 on."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {chr(c): b for b, c in chars.items()}


_CHAR_TO_BYTE = _gpt2_char_to_byte()


def _byte_level(piece: str) -> bytes | None:
    """A byte-level BPE token's bytes; None when a character is outside the byte map."""
    try:
        return bytes([_CHAR_TO_BYTE[c] for c in piece])
    except KeyError:
        return None


def _sentencepiece(piece: str, byte_fallback: bool) -> bytes | None:
    """A SentencePiece token's bytes: "▁" is a space, `<0xNN>` one raw byte."""
    if byte_fallback:
        match = _BYTE_TOKEN.fullmatch(piece)
        if match:
            return bytes([int(match.group(1), 16)])
    # surrogateescape: a GGUF string that was not valid UTF-8 comes back as its own bytes.
    return piece.replace(_SPACE, " ").encode("utf-8", "surrogateescape")


class Vocabulary:
    """Token id → bytes for every id a model can emit, plus its EOS ids.

    `token_bytes[i]` is the text token `i` writes, or None when `i` never matches text.
    `size` is the logits width; ids from `n_tokens` to `size` are padding and always None.
    `special_ids` are the tokenizer's own ids that are None (special, control, added,
    unknown, unused), EOS included. Two vocabularies are equal when their token bytes and EOS
    ids are; `fingerprint()` hashes exactly that, for use as a cache key.
    """

    __slots__ = ("token_bytes", "eos_ids", "size", "n_tokens", "special_ids", "_fingerprint")

    def __init__(self, token_bytes: Sequence[bytes | None], eos_ids: Iterable[int], *, size: int | None = None):
        tokens = list(token_bytes)
        for i, b in enumerate(tokens):
            if b is not None and not isinstance(b, bytes):
                raise TypeError(f"token {i} must be bytes or None, not {type(b).__name__}")
            if b == b"":
                tokens[i] = None  # an empty token writes nothing: never useful, and it would loop
        if size is None:
            size = len(tokens)
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"size must be a non-negative int, not {size!r}")
        n_tokens = min(len(tokens), size)
        tokens = tokens[:n_tokens] + [None] * (size - n_tokens)
        eos = frozenset(int(i) for i in eos_ids)
        bad = sorted(i for i in eos if not 0 <= i < size)
        if bad:
            raise ValueError(f"EOS ids {bad} are outside the vocabulary of size {size}")
        for i in eos:
            tokens[i] = None  # EOS ends the text; it never writes any
        self.token_bytes: list[bytes | None] = tokens
        self.eos_ids: frozenset[int] = eos
        self.size: int = size
        self.n_tokens: int = n_tokens
        self.special_ids: frozenset[int] = frozenset(i for i in range(n_tokens) if tokens[i] is None)
        self._fingerprint: str | None = None

    # ----------------------------------------------------------------- sources

    @classmethod
    def from_transformers(cls, tokenizer, *, vocab_size: int | None = None,
                          eos_ids: Iterable[int] | None = None, model=None) -> Vocabulary:
        """From a transformers tokenizer (fast or slow).

        `vocab_size` is the logits width when it differs from the tokenizer (default: `model`'s
        `config.vocab_size` when a model is given, else the tokenizer's length). `eos_ids`, when
        given, replaces the EOS ids found: the tokenizer's `eos_token_id`, the model's
        `generation_config.eos_token_id` (int or list), and the chat end tokens it holds.
        """
        if not (callable(getattr(tokenizer, "get_vocab", None))
                and callable(getattr(tokenizer, "convert_ids_to_tokens", None))):
            raise TypeError("Vocabulary.from_transformers expects a transformers tokenizer "
                            f"(with get_vocab and convert_ids_to_tokens), not {type(tokenizer).__name__}")
        piece_ids = tokenizer.get_vocab()
        n = max([len(tokenizer), *(i + 1 for i in piece_ids.values())]) if piece_ids else len(tokenizer)
        pieces: list[str | None] = [None] * n
        for piece, i in piece_ids.items():
            pieces[i] = piece
        added = set(getattr(tokenizer, "added_tokens_decoder", {}) or {})
        added |= {i for i in getattr(tokenizer, "all_special_ids", []) or [] if i is not None}
        spelling, byte_fallback = _transformers_spelling(tokenizer, pieces)
        tokens: list[bytes | None] = []
        for i, piece in enumerate(pieces):
            if piece is None or i in added:
                tokens.append(None)
            elif spelling == "byte_level":
                tokens.append(_byte_level(piece))
            else:
                tokens.append(_sentencepiece(piece, byte_fallback))
        if vocab_size is None and model is not None:
            vocab_size = _model_vocab_size(model)
        size = len(tokens) if vocab_size is None else int(vocab_size)
        if eos_ids is None:
            found = set()
            if getattr(tokenizer, "eos_token_id", None) is not None:
                found.add(tokenizer.eos_token_id)
            if model is not None:
                found |= _as_ids(getattr(getattr(model, "generation_config", None), "eos_token_id", None))
            found |= {piece_ids[name] for name in CHAT_END_TOKENS
                      if name in piece_ids and tokens[piece_ids[name]] is None}
            eos_ids = {i for i in found if i < size}
        return cls(tokens, eos_ids, size=size)

    @classmethod
    def from_gguf(cls, path: str | PathLike, *, vocab_size: int | None = None,
                  eos_ids: Iterable[int] | None = None) -> Vocabulary:
        """From a GGUF file (a whole model or a vocabulary-only file such as llama.cpp's).

        Token types: 1 normal and 6 byte are text; 2 unknown, 3 control, 4 user-defined and
        5 unused are None. EOS ids (unless given): `tokenizer.ggml.eos_token_id`, the EOT and
        EOM ids when present, and the chat end tokens held as control tokens.
        """
        meta = _read_gguf_metadata(path, {
            "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
            "tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
        pieces = meta.get("tokenizer.ggml.tokens")
        kind = meta.get("tokenizer.ggml.model")
        if not isinstance(pieces, list) or kind is None:
            raise ValueError(f"{path} holds no tokenizer (tokenizer.ggml.model / tokenizer.ggml.tokens)")
        pre = meta.get("tokenizer.ggml.pre", "")
        # As llama.cpp's llama-vocab.cpp: these write spaces as "▁" and have byte tokens.
        if kind in ("llama", "t5", "gemma4") or (kind == "gpt2" and pre in ("gemma4", "sarvam-moe")):
            spelling = "sentencepiece"
        elif kind == "gpt2":
            spelling = "byte_level"
        else:
            raise ValueError(f"{path}: tokenizer model {kind!r} is not supported "
                             "(supported: 'gpt2' byte-level BPE, 'llama' / 'gemma4' / 't5' SentencePiece)")
        types = meta.get("tokenizer.ggml.token_type")
        if types is None:
            types = [1] * len(pieces)
        tokens: list[bytes | None] = []
        for piece, kind_of in zip(pieces, types):
            if kind_of == 1:
                tokens.append(_byte_level(piece) if spelling == "byte_level" else _sentencepiece(piece, False))
            elif kind_of == 6:
                match = _BYTE_TOKEN.fullmatch(piece)
                tokens.append(bytes([int(match.group(1), 16)]) if match else None)
            else:
                tokens.append(None)
        size = len(tokens) if vocab_size is None else int(vocab_size)
        if eos_ids is None:
            found = {meta[k] for k in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                       "tokenizer.ggml.eom_token_id") if isinstance(meta.get(k), int)}
            ends = set(CHAT_END_TOKENS)
            found |= {i for i, (piece, t) in enumerate(zip(pieces, types)) if t == 3 and piece in ends}
            eos_ids = {i for i in found if 0 <= i < min(size, len(tokens))}
        return cls(tokens, eos_ids, size=size)

    @classmethod
    def from_llama(cls, llm, *, vocab_size: int | None = None, eos_ids: Iterable[int] | None = None) -> Vocabulary:
        """From a llama-cpp-python `Llama` (a `vocab_only=True` one is enough).

        Bytes are llama.cpp's own rendering of each token (`llama_token_to_piece` without
        special tokens); control, unknown, unused and user-defined tokens are None. EOS ids
        (unless given): every id llama.cpp counts as end of generation (`llama_vocab_is_eog`:
        EOS, EOT and the chat end tokens it knows) plus `llm.token_eos()`.
        """
        try:
            import llama_cpp
        except ImportError as exc:
            raise ImportError("Vocabulary.from_llama needs llama-cpp-python: pip install llama-cpp-python") from exc
        if not callable(getattr(llm, "n_vocab", None)) or getattr(llm, "_model", None) is None:
            raise TypeError(f"Vocabulary.from_llama expects a llama_cpp.Llama, not {type(llm).__name__}")
        # 0.3.x passes the llama_vocab* (llama_vocab_* calls); older releases the llama_model*.
        handle = getattr(llm._model, "vocab", None)
        if handle is None:
            handle = llm._model.model
        get_attr = getattr(llama_cpp, "llama_vocab_get_attr", None) or llama_cpp.llama_token_get_attr
        n = llm.n_vocab()
        text_attrs = llama_cpp.LLAMA_TOKEN_ATTR_NORMAL | llama_cpp.LLAMA_TOKEN_ATTR_BYTE
        never = (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
                 | llama_cpp.LLAMA_TOKEN_ATTR_UNUSED | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED)
        buf = ctypes.create_string_buffer(256)
        tokens: list[bytes | None] = []
        for i in range(n):
            attr = int(get_attr(handle, i))
            if not attr & text_attrs or attr & never:
                tokens.append(None)
                continue
            length = llama_cpp.llama_token_to_piece(handle, i, buf, len(buf), 0, False)
            if length < 0:
                buf = ctypes.create_string_buffer(-length)
                length = llama_cpp.llama_token_to_piece(handle, i, buf, len(buf), 0, False)
            tokens.append(buf.raw[:length])
        size = n if vocab_size is None else int(vocab_size)
        if eos_ids is None:
            is_eog = getattr(llama_cpp, "llama_vocab_is_eog", None) or llama_cpp.llama_token_is_eog
            found = {i for i in range(n) if is_eog(handle, i)}
            found |= {llm.token_eos()}
            eos_ids = {i for i in found if 0 <= i < min(size, n)}
        return cls(tokens, eos_ids, size=size)

    # ----------------------------------------------------------------- identity

    def fingerprint(self) -> str:
        """A SHA-256 hex digest of the token bytes and EOS ids: equal vocabularies, equal masks."""
        if self._fingerprint is None:
            blob, lengths = self._packed()
            digest = hashlib.sha256(b"constrain.Vocabulary/1\0")
            digest.update(struct.pack("<Q", self.size))
            digest.update(lengths)
            digest.update(blob)
            digest.update(np.asarray(sorted(self.eos_ids), dtype="<i8").tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    def __eq__(self, other) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self is other or (self.size == other.size and self.fingerprint() == other.fingerprint())

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        text = sum(b is not None for b in self.token_bytes)
        return (f"Vocabulary(size={self.size}, text tokens={text}, special={len(self.special_ids)}, "
                f"padding={self.size - self.n_tokens}, eos={sorted(self.eos_ids)})")

    # ----------------------------------------------------------------- pickling

    def _packed(self) -> tuple[bytes, bytes]:
        """All token bytes concatenated, and each token's length (-1 for None) as int32."""
        lengths = np.fromiter((-1 if b is None else len(b) for b in self.token_bytes),
                              dtype="<i4", count=self.size)
        return b"".join(b for b in self.token_bytes if b is not None), lengths.tobytes()

    def __getstate__(self) -> dict:
        blob, lengths = self._packed()
        return {"version": 1, "blob": blob, "lengths": lengths, "n_tokens": self.n_tokens,
                "eos_ids": sorted(self.eos_ids), "fingerprint": self._fingerprint}

    def __setstate__(self, state: dict) -> None:
        if state.get("version") != 1:
            raise ValueError(f"cannot unpickle a Vocabulary of state version {state.get('version')!r}")
        blob, lengths = state["blob"], np.frombuffer(state["lengths"], dtype="<i4")
        ends = np.cumsum(np.maximum(lengths, 0)).tolist()
        tokens: list[bytes | None] = []
        start = 0
        for length, end in zip(lengths.tolist(), ends):
            tokens.append(None if length < 0 else blob[start:end])
            start = end
        self.token_bytes = tokens
        self.eos_ids = frozenset(state["eos_ids"])
        self.size = len(tokens)
        self.n_tokens = state["n_tokens"]
        self.special_ids = frozenset(i for i in range(self.n_tokens) if tokens[i] is None)
        self._fingerprint = state.get("fingerprint")


# --------------------------------------------------------------------- transformers

def _transformers_spelling(tokenizer, pieces: list[str | None]) -> tuple[str, bool]:
    """("byte_level" | "sentencepiece", byte_fallback), from the decoder or by probing the pieces."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    decoder = getattr(backend, "decoder", None) if backend is not None else None
    if decoder is not None:
        try:
            spec = json.loads(decoder.__getstate__())
        except (AttributeError, TypeError, ValueError):
            spec = None
        kinds: set[str] = set()

        def walk(node) -> None:
            if isinstance(node, dict):
                kinds.add(str(node.get("type")))
                if node.get("type") == "Replace" and (node.get("pattern") or {}).get("String") == _SPACE:
                    kinds.add("Metaspace")
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(spec)
        if "ByteLevel" in kinds:
            return "byte_level", False
        if "Metaspace" in kinds:
            return "sentencepiece", "ByteFallback" in kinds
    # Slow tokenizers, or a decoder we cannot read: the pieces tell.
    if getattr(tokenizer, "byte_decoder", None) is not None:
        return "byte_level", False
    present = [p for p in pieces if p]
    bytes_tokens = sum(1 for p in present if _BYTE_TOKEN.fullmatch(p))
    metaspace = sum(1 for p in present if _SPACE in p)
    byte_map = sum(1 for p in present if "Ġ" in p or "Ċ" in p)
    if getattr(tokenizer, "sp_model", None) is not None or metaspace > byte_map:
        return "sentencepiece", bytes_tokens >= 256
    if byte_map:
        return "byte_level", False
    raise ValueError(f"cannot tell how {type(tokenizer).__name__}'s tokens spell bytes: "
                     "neither byte-level BPE (GPT-2 byte map) nor SentencePiece ('▁', <0xNN>)")


def _model_vocab_size(model) -> int | None:
    config = getattr(model, "config", None)
    if config is None:
        return None
    if callable(getattr(config, "get_text_config", None)):
        config = config.get_text_config()
    size = getattr(config, "vocab_size", None)
    return int(size) if size else None


def _as_ids(value) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


# --------------------------------------------------------------------- GGUF

_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def _read_gguf_metadata(path: str | PathLike, wanted: set[str]) -> dict[str, object]:
    """The wanted metadata keys of a GGUF file (versions 2 and 3, either byte order).

    Strings come back as str (invalid UTF-8 kept through surrogateescape), arrays as lists.
    Only the metadata is read; the tensors are never touched.
    """
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError as exc:  # an empty file
            raise ValueError(f"{path} is not a GGUF file (empty)") from exc
    try:
        return _parse_gguf(data, wanted, str(path))
    except struct.error as exc:
        raise ValueError(f"{path} is a truncated or corrupt GGUF file: {exc}") from exc
    finally:
        data.close()


def _parse_gguf(data, wanted: set[str], name: str) -> dict[str, object]:
    if data[:4] != b"GGUF":
        raise ValueError(f"{name} is not a GGUF file (magic {bytes(data[:4])!r})")
    order = "<"
    (version,) = struct.unpack_from("<I", data, 4)
    if version & 0xFFFF == 0:  # written big-endian
        order = ">"
        (version,) = struct.unpack_from(">I", data, 4)
    if version not in (2, 3):
        raise ValueError(f"{name}: GGUF version {version} is not supported (2 and 3 are)")
    u32, u64 = struct.Struct(order + "I"), struct.Struct(order + "Q")
    _, n_kv = struct.unpack_from(order + "QQ", data, 8)
    offset = 24

    def string(at: int) -> tuple[str, int]:
        (n,) = u64.unpack_from(data, at)
        at += 8
        return data[at:at + n].decode("utf-8", "surrogateescape"), at + n

    def value(kind: int, at: int, keep: bool) -> tuple[object, int]:
        if kind in _GGUF_SCALARS:
            fmt = struct.Struct(order + _GGUF_SCALARS[kind])
            return (fmt.unpack_from(data, at)[0] if keep else None), at + fmt.size
        if kind == _GGUF_STRING:
            if keep:
                return string(at)
            return None, at + 8 + u64.unpack_from(data, at)[0]
        if kind == _GGUF_ARRAY:
            (item,) = u32.unpack_from(data, at)
            (count,) = u64.unpack_from(data, at + 4)
            at += 12
            if item in _GGUF_SCALARS:
                dtype = np.dtype(order + _GGUF_SCALARS[item])
                end = at + count * dtype.itemsize
                return (np.frombuffer(data[at:end], dtype=dtype).tolist() if keep else None), end
            if item == _GGUF_STRING:
                if keep:
                    items = []
                    for _ in range(count):
                        text, at = string(at)
                        items.append(text)
                    return items, at
                for _ in range(count):
                    at += 8 + u64.unpack_from(data, at)[0]
                return None, at
            items = []
            for _ in range(count):
                v, at = value(item, at, keep)
                items.append(v)
            return (items if keep else None), at
        raise ValueError(f"{name}: unknown GGUF value type {kind}")

    found: dict[str, object] = {}
    for _ in range(n_kv):
        key, offset = string(offset)
        (kind,) = u32.unpack_from(data, offset)
        offset += 4
        v, offset = value(kind, offset, key in wanted)
        if key in wanted:
            found[key] = v
        if len(found) == len(wanted):
            break
    return found
