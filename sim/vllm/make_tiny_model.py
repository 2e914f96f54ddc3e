"""Create a tiny, randomly initialised chat model that vLLM can serve on a CPU, offline.

Run it with the vLLM virtualenv's Python (it needs ``torch``, ``transformers`` and
``tokenizers``)::

    python sim/vllm/make_tiny_model.py OUT_DIR

The model answers nonsense, but it exercises vLLM's real serving path: chat template,
tokenizer, sampling, logprobs, structured outputs and the ``hermes`` tool-call parser.
Everything is deterministic (fixed corpus, fixed seeds), so two runs produce the same files.

The folder is written next to ``OUT_DIR`` and renamed into place at the end, so a reader
never sees half a model, and a second run with an up-to-date model is a no-op.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

# The marker records which recipe built the folder: a changed script rebuilds the model.
MARKER_NAME = ".tandem-tiny-model"
RECIPE_VERSION = "1"

BOS_TOKEN = "<|begin_of_text|>"
PAD_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
TOOL_TOKENS = (
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<tools>",
    "</tools>",
)
VOCAB_SIZE = 1024
MAX_POSITION_EMBEDDINGS = 2048
SEED = 20261129

# Qwen2.5/Hermes-style template: tools in the system turn, assistant tool calls inside
# <tool_call> tags (what vLLM's `hermes` parser looks for), tool results as user turns
# wrapped in <tool_response>. `arguments` may arrive as a JSON string or as a dict.
CHAT_TEMPLATE = """\
{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content }}
{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}
{{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'
    'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}
{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and '
    'arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n'
    '{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first)
      or (message.role == 'assistant' and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\\n<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}
{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\\n<tool_response>\\n' + (message.content or '') + '\\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""

_WORD_TEXT = """
the a an agent model edge cloud step route judge token request answer tool call file
read write edit list run test build fix bug error patch diff line function class return
value name path directory command shell output input user assistant system message
weather city temperature paris london tokyo berlin today tomorrow please thanks hello
world python json yaml http server client stream usage cost price privacy secret key
open close start stop wait check result success failure retry timeout cache memory
and or not if else for while with from import def self true false null none of to in
is it this that on at by be we you they can will should must may one two three four
five six seven eight nine ten hundred thousand first last next previous new old good bad
small large fast slow local remote private public safe unsafe allow deny block redact
config setting option default value limit budget latency throughput request response
header body status code session trajectory ledger exposure metric counter gauge
histogram label alert rule dashboard panel query service deploy chart image container
kubernetes docker compose redis database table column index record entry field schema
string integer number boolean array object format parse encode decode compress
repository branch commit merge review issue ticket plan sketch advisor probe draft
score threshold entropy confidence probability sample temperature logprob choice
delta chunk event done finish reason length stop content role function arguments
search replace insert delete move copy rename create update remove install upgrade
package module library framework version release date time hour minute second week
month year morning evening night north south east west left right up down inside outside
"""
_WORDS = _WORD_TEXT.split()

_SNIPPETS = (
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    '{"name": "read_file", "arguments": {"path": "src/main.py"}}',
    '{"name": "run_command", "arguments": {"command": "pytest -x -q"}}',
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "for i in range(10):\n    print(i)\n",
    "$ ls -la /tmp && cat README.md | head -n 20\n",
    "HTTP/1.1 200 OK\nContent-Type: application/json\n\n",
    "The quick brown fox jumps over the lazy dog. 0123456789 !?.,;:'\"()[]{}<>+-*/=_%#@&|\\~`^$",
)


def training_corpus() -> list[str]:
    """Return a fixed pseudo-random English/code/JSON corpus (no files, no downloads)."""
    rng = random.Random(SEED)
    lines = list(_SNIPPETS)
    for _ in range(4000):
        words = rng.choices(_WORDS, k=rng.randint(4, 16))
        sentence = " ".join(words).capitalize() + rng.choice((".", "?", "!", ":"))
        lines.append(sentence)
        if rng.random() < 0.2:
            lines.append(rng.choice(_SNIPPETS))
    return lines


def build_tokenizer(out_dir: Path) -> Any:
    """Train a byte-level BPE and save it as a fast tokenizer, which it returns."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AddedToken, PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    special_tokens = [PAD_TOKEN, BOS_TOKEN, IM_START, IM_END]
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - len(TOOL_TOKENS),
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(training_corpus(), trainer=trainer)

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=BOS_TOKEN,
        eos_token=IM_END,
        pad_token=PAD_TOKEN,
        unk_token=None,
        model_max_length=MAX_POSITION_EMBEDDINGS,
        clean_up_tokenization_spaces=False,
    )
    # As in Qwen2.5, the tool tags are single tokens (some vLLM `hermes` parsers look their ids
    # up in the vocabulary) that survive decoding (special=False): the parser reads them from
    # the text, which keeps them even when a request skips special tokens.
    tokenizer.add_tokens([AddedToken(tag, special=False, normalized=False) for tag in TOOL_TOKENS])
    tokenizer.add_special_tokens({"additional_special_tokens": [IM_START, IM_END]})
    tokenizer.save_pretrained(out_dir)

    # transformers 5 writes a class name ("TokenizersBackend") older releases do not know, and
    # keeps the template in a separate chat_template.jinja. Put the template in
    # tokenizer_config.json and name the class every release knows, so any client can load it.
    config_path = out_dir / "tokenizer_config.json"
    tokenizer_config = json.loads(config_path.read_text())
    tokenizer_config["tokenizer_class"] = "PreTrainedTokenizerFast"
    tokenizer_config["chat_template"] = CHAT_TEMPLATE
    config_path.write_text(json.dumps(tokenizer_config, indent=2, sort_keys=True) + "\n")
    (out_dir / "chat_template.jinja").unlink(missing_ok=True)
    return tokenizer


def suppress_whitespace_tokens(model: Any, whitespace_ids: list[int]) -> None:
    """Give whitespace-only tokens a large negative logit bias, built out of the weights.

    Under a JSON grammar (strict tool calls, structured outputs) a random model tends to pick
    whitespace, which JSON allows without limit, until max_tokens: the call never closes.
    Llama has no output bias, so hidden dimension 0 is made a constant: every embedding holds
    a fixed positive value there and no layer writes to it, so after the final RMSNorm it is
    positive for every position, and a negative weight on it in the output rows of the
    whitespace tokens lowers their logits far below the others (the grammar can still force
    them where nothing else is allowed).
    """
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 0.1  # others are ~N(0, 0.02)
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0, :] = 0.0
            layer.mlp.down_proj.weight[0, :] = 0.0
        model.lm_head.weight[whitespace_ids, 0] = -2.0


def build_model(out_dir: Path, vocab_size: int, token_ids: dict[str, int], whitespace_ids: list[int]) -> None:
    """Save a randomly initialised 2-layer Llama in float32 (about 2.5 MB)."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,  # head size 32: vLLM's CPU attention needs at least 32
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITION_EMBEDDINGS,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        bos_token_id=token_ids[BOS_TOKEN],
        eos_token_id=token_ids[IM_END],
        pad_token_id=token_ids[PAD_TOKEN],
        dtype="float32",
    )
    model = LlamaForCausalLM(config)  # float32: torch's default dtype
    suppress_whitespace_tokens(model, whitespace_ids)
    model.generation_config = GenerationConfig(
        bos_token_id=token_ids[BOS_TOKEN],
        eos_token_id=token_ids[IM_END],
        pad_token_id=token_ids[PAD_TOKEN],
    )
    model.save_pretrained(out_dir, safe_serialization=True)


def recipe_digest() -> str:
    """Identify this recipe: the script's own bytes plus the library versions used."""
    # Versions from package metadata: importing torch only to skip the build costs a second.
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(RECIPE_VERSION.encode())
    for package in ("torch", "transformers", "tokenizers"):
        digest.update(f"{package}=={metadata.version(package)}".encode())
    return digest.hexdigest()


def is_complete(out_dir: Path, digest: str) -> bool:
    marker = out_dir / MARKER_NAME
    return marker.is_file() and json.loads(marker.read_text()).get("recipe") == digest


def make_tiny_model(out_dir: Path) -> bool:
    """Build the model into ``out_dir``; return False when it was already there."""
    digest = recipe_digest()
    if is_complete(out_dir, digest):
        return False
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        tokenizer = build_tokenizer(staging)
        vocab_size = len(tokenizer)
        token_ids = {token: tokenizer.convert_tokens_to_ids(token) for token in (BOS_TOKEN, PAD_TOKEN, IM_END)}
        whitespace_ids = [token_id for token_id in range(vocab_size) if tokenizer.decode([token_id]).isspace()]
        build_model(staging, vocab_size, token_ids, whitespace_ids)
        marker = {"recipe": digest, "vocab_size": vocab_size}
        (staging / MARKER_NAME).write_text(json.dumps(marker) + "\n")
        # mkdtemp makes the folder 0700 and safetensors writes 0600; make it readable like
        # any other model folder.
        os.chmod(staging, 0o755)
        for path in staging.iterdir():
            os.chmod(path, 0o644)
        if out_dir.exists():
            if is_complete(out_dir, digest):  # a concurrent run finished first
                return False
            shutil.rmtree(out_dir)
        os.rename(staging, out_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder to hold the model")
    args = parser.parse_args(argv)
    # Never reach for the hub: everything here is built locally.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    out_dir: Path = args.out_dir.expanduser().resolve()
    with tempfile.TemporaryDirectory(prefix="tandem-tiny-model-") as scratch:
        # torch makes an inductor cache folder (/tmp/torchinductor_$USER) while the model is
        # built; keep it in a scratch folder that goes away.
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(scratch, "torchinductor"))
        built = make_tiny_model(out_dir)
    print(f"tiny model {'created' if built else 'already present'} in {out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
