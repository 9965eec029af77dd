"""TRL's GRPOTrainer run for a few steps on a WebServ server through webserv.trl.

Run by ``deno task test:trl`` (tools/test_trl.ts), which makes the venv
(adapters/python/requirements-trl.txt), starts the rollout server and reads
the JSON summary this prints on its last line. Everything is local: the model
is a tiny randomly initialised Qwen2 built from a config, its tokenizer a BPE
trained here on the task text and the tool schemas, with Qwen2.5's chat
template as TRL ships it (so TRL's own tool-call parser reads its output);
HF_HUB_OFFLINE keeps the hub out. CPU only.

What must be real is TRL's loop, not the policy's skill: the trainer resets
the factory's envs with the dataset rows, offers their methods as tools,
runs whatever tool calls the model emits through the server and scores each
rollout with ``get_reward()`` (the verifier), which is its only reward source.
The tokenizer holds a few whole tool calls as single tokens and sampling
favours them a little, so the random model emits parseable calls that TRL
parses and runs; to prove the verifier's reward of 1
reaches the trainer's reward function whatever the model did, one scripted
rollout is also driven through an env instance the trainer used, and scored by
the trainer's own reward function.
"""

import json
import os
import sys
import time
import urllib.request

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import qwen2_5_chat_template  # noqa: E402

from webserv.trl import WebServToolEnv, environment_factory  # noqa: E402

URL = os.environ["WEBSERV_URL"]
STEPS = int(os.environ.get("WEBSERV_TRL_STEPS", "2"))
TASKS = [f"demo/add-note/{seed}" for seed in range(1, 5)]
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
           "<tool_response>", "</tool_response>"]
# Whole tool-call bodies as single tokens (TRL's parser reads a call between
# the <tool_call> and </tool_call> tokens), which a random model can sample.
CALLS = [
    '\n{"name": "click", "arguments": {"id": 2}}\n',
    '\n{"name": "scroll", "arguments": {"direction": "down"}}\n',
    '\n{"name": "stop", "arguments": {"answer": "done"}}\n',
]


def get(path):
    with urllib.request.urlopen(URL + path, timeout=60) as response:
        return response.read().decode()


def live_sessions():
    return json.loads(get("/health"))["live"]


def sessions_created():
    for line in get("/metrics").splitlines():
        if line.startswith("webserv_sessions_created_total "):
            return int(float(line.split()[1]))
    raise AssertionError("/metrics has no webserv_sessions_created_total")


def steps_taken():
    """Every step the server ran, whatever its status."""
    return sum(int(float(line.split()[1])) for line in get("/metrics").splitlines()
               if line.startswith("webserv_steps_total{"))


def build_tokenizer(corpus):
    """A byte-level BPE trained on the corpus, wrapped with Qwen2.5's chat template."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus, trainer)
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>",
                                      pad_token="<|endoftext|>")
    wrapped.add_tokens(CALLS)
    wrapped.chat_template = qwen2_5_chat_template
    return wrapped


def call_bias(tokenizer):
    """``generate``'s sequence_bias that makes the three-token calls likely."""
    open_, close = tokenizer.convert_tokens_to_ids(["<tool_call>", "</tool_call>"])
    bodies = tokenizer.convert_tokens_to_ids(CALLS)
    return ([[[open_], 3.0]] + [[[open_, body], 12.0] for body in bodies]
            + [[[body, close], 12.0] for body in bodies])


def build_model(tokenizer):
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return Qwen2ForCausalLM(config)


def solve(environment, prompt):
    """The demo add-note task's scripted solution, through the env's tool methods."""
    note = prompt.split('"')[1]
    environment.type(id=1, text=note)
    environment.click(id=2)
    environment.stop(answer="added")


def main():
    started = time.monotonic()
    before = sessions_created()
    with environment_factory(URL, timeout=120.0) as factory:
        # The corpus: what the model reads (the tasks' first prompts) and the tools' schemas.
        probe = WebServToolEnv(URL)
        corpus = [probe.reset(task=task) for task in TASKS]
        probe._close()
        corpus += [json.dumps(get_json_schema(getattr(WebServToolEnv, name)))
                   for name in dir(WebServToolEnv) if not name.startswith("_")
                   and name not in ("reset", "get_reward")]
        tokenizer = build_tokenizer(corpus)
        model = build_model(tokenizer)
        dataset = Dataset.from_dict({
            "prompt": [[{"role": "user", "content": "Use the tools to do the task.\n\n"}]] * len(TASKS),
            "task": TASKS,
        })
        args = GRPOConfig(
            output_dir=os.environ.get("WEBSERV_TRL_OUTPUT", "/tmp/webserv-trl-run"),
            max_steps=STEPS, per_device_train_batch_size=2, num_generations=2,
            max_completion_length=256, max_tool_calling_iterations=3, learning_rate=1e-4,
            # A sampling bias (a logits processor, not a trained weight): towards
            # <tool_call>, then a call body after it, then </tool_call> after a
            # body, so most rollouts emit a well-formed call within a few tokens.
            generation_kwargs={"sequence_bias": call_bias(tokenizer)},
            logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, bf16=False,
            seed=0, dataloader_num_workers=0,
        )
        trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args,
                              train_dataset=dataset, environment_factory=factory)
        # The only reward source is the environment's get_reward (the verifier).
        assert trainer.reward_func_names == ["WebServToolEnv"], trainer.reward_func_names
        trained, steps_before = time.monotonic(), steps_taken()
        trainer.train()
        train_seconds = time.monotonic() - trained
        # The model's tool calls that TRL parsed ran as actions on the server.
        server_steps = steps_taken() - steps_before
        assert server_steps > 0, "no tool call of the trainer reached the server"
        assert trainer.state.global_step == STEPS, trainer.state.global_step
        logs = [entry for entry in trainer.state.log_history if "rewards/WebServToolEnv/mean" in entry]
        assert len(logs) == STEPS, trainer.state.log_history
        envs = list(trainer._environment_pool[None])
        assert envs and all(env in factory.envs for env in envs)
        assert all(env._session is not None for env in envs), "the trainer reset every env it used"
        # The last step's rollouts were scored by the verifier (an env's reward
        # is set only by a verdict), and the trainer logged those verdicts.
        verdicts = [env._reward for env in envs]
        assert None not in verdicts, verdicts
        logged = logs[-1]["rewards/WebServToolEnv/mean"]
        assert abs(logged - sum(verdicts) / len(verdicts)) < 1e-6, (logged, verdicts)
        # A scripted rollout through an env the trainer used, scored by the
        # trainer's own reward function: the verifier's 1 reaches it.
        environment = envs[0]
        solve(environment, environment.reset(task="demo/add-note/1"))
        scripted = trainer.reward_funcs[-1](environments=[environment])
        assert scripted == [1.0], scripted
        # And an untouched episode scores 0 there: the reward is the verifier's, not a constant.
        environment.reset(task="demo/add-note/2")
        untouched = trainer.reward_funcs[-1](environments=[environment])
        assert untouched == [0.0], untouched
        live_during = live_sessions()
        assert live_during == len(factory.envs), (live_during, len(factory.envs))
        made = len(factory.envs)
    # Leaving the factory's block closed every session it opened.
    live_after = live_sessions()
    assert live_after == 0, f"{live_after} sessions leaked"
    created = sessions_created() - before
    summary = {
        "versions": {name: __import__(name).__version__ for name in ("trl", "transformers", "torch",
                                                                       "datasets", "tokenizers")},
        "python": sys.version.split()[0],
        "steps": trainer.state.global_step,
        "train_seconds": round(train_seconds, 1),
        "total_seconds": round(time.monotonic() - started, 1),
        "model": {"layers": 2, "hidden": 64, "vocab": len(tokenizer),
                  "parameters": sum(p.numel() for p in model.parameters())},
        "config": {"num_generations": args.num_generations,
                   "max_completion_length": args.max_completion_length,
                   "max_tool_calling_iterations": args.max_tool_calling_iterations},
        "envs_made": made,
        "last_step_verdicts": verdicts,
        "server_steps_in_training": server_steps,
        "sessions_created": created,
        "live_after": live_after,
        "scripted_reward": scripted[0],
        "untouched_reward": untouched[0],
        "log": [{key: entry[key] for key in ("step", "rewards/WebServToolEnv/mean", "reward",
                                              "tools/call_frequency", "tools/failure_frequency", "loss")
                 if key in entry} for entry in logs],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
