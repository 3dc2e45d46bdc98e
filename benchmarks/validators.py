"""Generated documents under every validator users run: python-jsonschema, jsonschema-rs and Ajv.

    python benchmarks/validators.py SOURCE... [--seeds 3] [--max-tokens 256] [--every N [--start K]] [--limit N]
        [--vocab llama-bpe] [--dialect portable|spec] [--no-ajv] [--out results.json]
    python benchmarks/validators.py --setup-ajv

A user checks our output with the validator their stack already has, and validators disagree at
the edges (regex dialects, formats). For each schema of the SOURCEs that constrain compiles, this
generates documents through ``Matcher`` under seeded random logits (EOS and tokens that close a
string, array or object nudged up, so documents finish) and validates every finished document with

- python-jsonschema, format checker on, the draft the schema names (2020-12 when it names none);
- jsonschema-rs, formats validated, the same draft;
- Ajv 8 with ajv-formats (strict mode off, formats validated, the draft the schema names), run
  through Node: ``npm install`` puts ajv, ajv-formats and ajv-draft-04 into the cache folder
  (``~/.cache/constrain/ajv``) the first time.

A SOURCE is a MaskBench folder (files holding ``{"schema": ...}``), the JSON-Schema-Test-Suite's
root (the schemas of ``tests/draft2020-12`` and ``tests/draft7``), a folder of schema files, or a
file holding one schema or a list of them. ``--setup-ajv`` only installs Ajv (CI does it first). Prints documents checked and rejected per validator, then every rejection with the
validator's message; ``--out`` writes it all as JSON. A validator that cannot load a schema
(refuses it) is counted apart, not as a rejection of our document.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import constrain  # noqa: E402
from automaton.matcher import Matcher  # noqa: E402

VALIDATORS = ("python-jsonschema", "jsonschema-rs", "ajv")
AJV_PACKAGES = ("ajv@8", "ajv-formats@3", "ajv-draft-04@1")
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"

AJV_SCRIPT = r"""
const fs = require("fs");
const path = require("path");
const dir = process.argv[2];
const need = (name) => require(path.join(dir, "node_modules", name));
const addFormats = need("ajv-formats");
const kinds = {
  "draft4": () => new (need("ajv-draft-04"))({strict: false, validateFormats: true}),
  "draft7": () => new (need("ajv").default)({strict: false, validateFormats: true}),
  "draft2019": () => new (need("ajv/dist/2019").default)({strict: false, validateFormats: true}),
  "draft2020": () => new (need("ajv/dist/2020").default)({strict: false, validateFormats: true}),
};
const out = [];
for (const line of fs.readFileSync(process.argv[3], "utf8").split("\n")) {
  if (!line) continue;
  const job = JSON.parse(line);
  const ajv = kinds[job.draft]();
  addFormats(ajv);
  let validate;
  const schema = Object.assign({}, job.schema);
  delete schema["$schema"];
  try { validate = ajv.compile(schema); } catch (e) { out.push({refused: String(e.message).slice(0, 300)}); continue; }
  out.push({results: job.docs.map((doc) => validate(JSON.parse(doc)) ? null : ajv.errorsText(validate.errors).slice(0, 300))});
}
fs.writeFileSync(process.argv[4], JSON.stringify(out));
"""


@dataclass
class Case:
    name: str
    schema: object
    draft: str = "draft2020"
    docs: list[str] = field(default_factory=list)  # finished documents, as generated
    compile_error: str = ""
    refused: dict[str, str] = field(default_factory=dict)  # validator -> why it could not load the schema
    rejected: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # validator -> (doc, message)


# -- schemas --------------------------------------------------------------------------------------
def load_sources(sources: list[Path]) -> list[tuple[str, object]]:
    out = []
    for source in sources:
        suite = source / "tests"
        if suite.is_dir():
            for draft in ("draft2020-12", "draft7"):
                for path in sorted((suite / draft).glob("*.json")):
                    for k, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
                        schema = group["schema"]
                        if isinstance(schema, dict) and "$schema" not in schema:
                            schema = {"$schema": ("http://json-schema.org/draft-07/schema#" if draft == "draft7"
                                                  else DRAFT_2020), **schema}
                        out.append((f"{draft}/{path.stem}/{k}", schema))
            continue
        for path in sorted(source.glob("*.json")) if source.is_dir() else [source]:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, list):  # a file of schemas
                out += [(f"{path.stem}/{k}", schema) for k, schema in enumerate(data)]
            else:  # a MaskBench file, or one schema
                out.append((path.stem, data["schema"] if isinstance(data, dict) and "meta" in data else data))
    return out


def draft_of(schema) -> str:
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for mark, draft in (("draft-04", "draft4"), ("draft-06", "draft7"), ("draft-07", "draft7"),
                        ("2019-09", "draft2019")):
        if mark in uri:
            return draft
    return "draft2020"


# -- generation -----------------------------------------------------------------------------------
class Nudged:
    """Seeded random logits over the mask; EOS and tokens holding a closing byte get a push that
    grows with the length, so most documents finish."""

    def __init__(self, vocab):
        self.vocab = vocab
        self.eos = np.zeros(vocab.size, dtype=bool)
        self.eos[sorted(vocab.eos_ids)] = True
        self.closing = np.array([b is not None and any(c in b for c in b'"]}') for b in vocab.token_bytes]
                                + [False] * (vocab.size - len(vocab.token_bytes)), dtype=bool)

    def document(self, grammar, rng, max_tokens: int) -> str | None:
        m = Matcher(grammar, self.vocab)
        out = bytearray()
        for step in range(max_tokens):
            allowed = np.flatnonzero(m.mask())
            if not len(allowed):
                raise AssertionError(f"empty mask after {bytes(out)!r}")
            logits = rng.standard_normal(len(allowed))
            push = 1.0 + 4.0 * step / max_tokens
            logits[self.eos[allowed]] += 2.0 * push
            logits[self.closing[allowed]] += push
            token = int(allowed[np.argmax(logits)])
            m.advance(token)
            if self.eos[token]:
                return out.decode("utf-8")
            out += self.vocab.token_bytes[token]
        return None


# -- validators -----------------------------------------------------------------------------------
def check_python(case: Case, values: list) -> None:
    import jsonschema
    from jsonschema.validators import validator_for

    cls = validator_for(case.schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(case.schema)
        validator = cls(case.schema, format_checker=cls.FORMAT_CHECKER)
        for i, value in enumerate(values):
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if error is not None:
                case.rejected.setdefault("python-jsonschema", []).append((i, _message(error)))
    except (jsonschema.SchemaError, jsonschema.exceptions.RefResolutionError, ValueError, TypeError) as exc:
        case.refused["python-jsonschema"] = str(exc).splitlines()[0][:300]


def _message(error) -> str:
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}"[:300]


def check_rs(case: Case, values: list) -> None:
    import jsonschema_rs

    try:
        validator = jsonschema_rs.validator_for(case.schema, validate_formats=True)
    except (jsonschema_rs.ValidationError, ValueError, TypeError) as exc:
        case.refused["jsonschema-rs"] = str(exc).splitlines()[0][:300]
        return
    for i, value in enumerate(values):
        error = next(iter(validator.iter_errors(value)), None)
        if error is not None:
            case.rejected.setdefault("jsonschema-rs", []).append((i, f"{error.instance_path}: {error.message}"[:300]))


def ajv_dir() -> Path:
    """ajv, ajv-formats and ajv-draft-04 installed from the npm registry once, in the cache."""
    from constrain.vocab_files import cache_dir

    folder = cache_dir() / "ajv"
    if not (folder / "node_modules" / "ajv-formats").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"private": true}\n', encoding="utf-8")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", *AJV_PACKAGES], cwd=folder,
                       check=True)
    (folder / "check.js").write_text(AJV_SCRIPT, encoding="utf-8")
    return folder


def check_ajv(cases: list[Case]) -> None:
    """The documents go as text: Node parses them as a JavaScript user would (1e400 is Infinity)."""
    folder = ajv_dir()
    with tempfile.TemporaryDirectory() as work:  # runs side by side do not share their files
        jobs, results = Path(work, "jobs.jsonl"), Path(work, "results.json")
        with jobs.open("w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps({"schema": case.schema, "draft": case.draft, "docs": case.docs}) + "\n")
        subprocess.run(["node", str(folder / "check.js"), str(folder), str(jobs), str(results)], check=True)
        answers = json.loads(results.read_text(encoding="utf-8"))
    for case, answer in zip(cases, answers):
        if "refused" in answer:
            case.refused["ajv"] = answer["refused"]
            continue
        for i, message in enumerate(answer["results"]):
            if message is not None:
                case.rejected.setdefault("ajv", []).append((i, message))


# -- run ------------------------------------------------------------------------------------------
def run(named: list[tuple[str, object]], *, vocab, seeds: int, max_tokens: int, dialect: str | None,
        validators: tuple[str, ...], progress=None) -> tuple[list[Case], dict]:
    nudged = Nudged(vocab)
    cases: list[Case] = []
    values: dict[str, list] = {}
    unfinished = 0
    for name, schema in named:
        case = Case(name, schema, draft_of(schema))
        try:
            grammar = constrain.compile(schema, cache=False, max_seconds=5,
                                        **({} if dialect is None else {"dialect": dialect}))
        except (constrain.SchemaError, ValueError, RecursionError) as exc:
            case.compile_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            cases.append(case)
            continue
        for seed in range(seeds):
            doc = nudged.document(grammar, np.random.default_rng(seed), max_tokens)
            if doc is None:
                unfinished += 1
            else:
                case.docs.append(doc)
        values[name] = [json.loads(d) for d in case.docs]
        if "python-jsonschema" in validators:
            check_python(case, values[name])
        if "jsonschema-rs" in validators:
            check_rs(case, values[name])
        cases.append(case)
        if progress is not None:
            progress.update(1)
    if "ajv" in validators:
        check_ajv([c for c in cases if not c.compile_error])
    return cases, {"unfinished": unfinished}


def summary(cases: list[Case], validators: tuple[str, ...]) -> dict:
    compiled = [c for c in cases if not c.compile_error]
    out = {"schemas": len(cases), "compiled": len(compiled), "documents": sum(len(c.docs) for c in compiled)}
    for v in validators:
        checked = [c for c in compiled if v not in c.refused]
        out[v] = {"documents": sum(len(c.docs) for c in checked),
                  "rejected": sum(len(c.rejected.get(v, [])) for c in checked),
                  "schemas refused by the validator": len(compiled) - len(checked)}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sources", nargs="*", type=Path, help="MaskBench folder, JSON-Schema-Test-Suite root, or schemas")
    p.add_argument("--seeds", type=int, default=3, help="documents tried per schema (default 3)")
    p.add_argument("--max-tokens", type=int, default=256, help="tokens per document at most (default 256)")
    p.add_argument("--limit", type=int, help="the first N schemas only")
    p.add_argument("--every", type=int, default=1, help="every Nth schema only")
    p.add_argument("--start", type=int, default=0, help="with --every: start at the Kth schema (default 0)")
    p.add_argument("--vocab", default="llama-bpe", help="llama.cpp vocabulary name (default llama-bpe: Llama 3)")
    p.add_argument("--dialect", choices=("portable", "spec"), help="constrain's dialect (default: "
                   "constrain's own default)")
    p.add_argument("--no-ajv", action="store_true", help="skip Ajv (no Node.js here)")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    p.add_argument("--setup-ajv", action="store_true", help="install Ajv into the cache, then stop")
    args = p.parse_args(argv)
    if args.setup_ajv:
        print(ajv_dir())
        return 0
    validators = tuple(v for v in VALIDATORS if not (v == "ajv" and args.no_ajv))
    if "ajv" in validators and shutil.which("node") is None:
        raise SystemExit("validators: Node.js is not on PATH; install it or pass --no-ajv")
    from constrain.vocab_files import llama_cpp_vocab

    vocab = constrain.Vocabulary.from_gguf(llama_cpp_vocab(args.vocab))
    named = load_sources(args.sources)[args.start::args.every][:args.limit]
    started = time.perf_counter()
    try:
        from tqdm import tqdm
        progress = tqdm(total=len(named), desc="schemas", file=sys.stderr)
    except ImportError:
        progress = None
    cases, extra = run(named, vocab=vocab, seeds=args.seeds, max_tokens=args.max_tokens, dialect=args.dialect,
                       validators=validators, progress=progress)
    if progress is not None:
        progress.close()
    totals = summary(cases, validators) | extra
    errors = Counter(c.compile_error.split(":")[0] for c in cases if c.compile_error)
    print(f"{totals['schemas']} schemas, {totals['compiled']} compiled ({dict(errors)} refused by constrain), "
          f"{totals['documents']} finished documents ({totals['unfinished']} cut at {args.max_tokens} tokens), "
          f"dialect {args.dialect or 'default'}, {time.perf_counter() - started:.0f} s")
    print("| validator | documents checked | rejected | schemas the validator refused |")
    print("|---|---|---|---|")
    for v in validators:
        t = totals[v]
        print(f"| {v} | {t['documents']} | {t['rejected']} | {t['schemas refused by the validator']} |")
    for case in cases:
        for v, items in case.rejected.items():
            for i, message in items:
                print(f"\n{v} rejects a document of {case.name} ({case.draft}): {message}\n  {case.docs[i][:300]}")
    if args.out is not None:
        args.out.write_text(json.dumps({"totals": totals, "cases": [asdict(c) for c in cases]}, ensure_ascii=False,
                                       indent=1), encoding="utf-8")
    return 1 if any(totals[v]["rejected"] for v in validators) else 0


if __name__ == "__main__":
    sys.exit(main())
