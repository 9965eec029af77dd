"""webserv.integrations.verl under verl's own agent-loop worker (verl 0.9.1's
``AgentLoopWorker.generate_sequences``: it reads the agent-loop config file, builds the loop by
name with Hydra, runs it, pads its tokens and turns the batch into verl's ``DataProto`` with the
reward on each response's last token) with the scripted model server as the endpoint, against a
real WebServ server: solvable rows earn 1, wrong ones 0, a server killed mid-episode fails the
batch (HarnessError), never a reward of 0.

No model weights are needed: the worker reads only a model's config and tokenizer, so the test
writes a tiny Qwen2 config and a byte-level ChatML tokenizer (built with ``tokenizers``, nothing
downloaded); verl picks its Qwen Continuous Token builder for it, as for a real Qwen model."""

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

import verl
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, _agent_loop_registry
from verl.protocol import DataProto

from _support import server_killed_on_second_turn
from webserv.harness import HarnessError
from webserv.integrations.verl import WebServAgentLoop
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]
PROMPT_LENGTH = 8192
RESPONSE_LENGTH = 4096

# ChatML as Qwen renders it (a turn ends with <|im_end|> and a newline), with the tools listed in
# the system turn and each tool call as <tool_call>{json}</tool_call>.
CHAT_TEMPLATE = (
    "{% if messages[0].role == 'system' or tools %}<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}{% endif %}"
    "{% if tools %}{{ '\n\n# Tools' }}{% for tool in tools %}{{ '\n' }}{{ tool | tojson }}{% endfor %}{% endif %}"
    "<|im_end|>\n"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first %}"
    "{% elif message.role == 'assistant' %}<|im_start|>assistant\n{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}<tool_call>{\"name\": {{ call.function.name | tojson }}, "
    "\"arguments\": {{ call.function.arguments if call.function.arguments is string "
    "else call.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>\n"
    "{% else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A model directory with a Qwen2 config and a byte-level ChatML tokenizer (no weights)."""
    path = tmp_path_factory.mktemp("tiny-qwen")
    vocab = {char: i for i, char in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    (path / "config.json").write_text(json.dumps({
        "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "vocab_size": len(vocab) + 3,
        "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 1,
        "num_key_value_heads": 1, "max_position_embeddings": PROMPT_LENGTH + RESPONSE_LENGTH,
    }))
    return path


def worker_for(model_dir, tmp_path, server, base_url):
    """verl's agent-loop worker as its trainer config makes it: verl's own ppo_trainer defaults, the
    model directory, and the agent loop listed in an agent-loop config file."""
    loops = tmp_path / "agent_loops.yaml"
    loops.write_text("- name: webserv_agent\n  _target_: webserv.integrations.verl.WebServAgentLoop\n")
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=[
            f"actor_rollout_ref.model.path={model_dir}",
            "actor_rollout_ref.rollout.name=vllm",
            f"actor_rollout_ref.rollout.prompt_length={PROMPT_LENGTH}",
            f"actor_rollout_ref.rollout.response_length={RESPONSE_LENGTH}",
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops}",
            f"+webserv.server={server}", f"+webserv.base_url={base_url}", "+webserv.model=scripted",
        ])
    return AgentLoopWorker(config, llm_client=None)


def batch_of(tasks):
    """A batch as verl's RLHFDataset hands it to the worker: one row per task, its agent named."""
    rows = len(tasks)
    return DataProto.from_single_dict({
        "agent_name": np.array(["webserv_agent"] * rows, dtype=object),
        "raw_prompt": np.array([[{"role": "user", "content": task}] for task in tasks], dtype=object),
        "extra_info": np.array([{"webserv": {"task": task}} for task in tasks], dtype=object),
        "index": np.arange(rows),
    })


def rewards(output):
    """Each row's reward as verl's trainer reads it: the sum of its token-level scores."""
    return output.batch["rm_scores"].sum(dim=-1).tolist()


def test_the_loop_is_registered_under_its_name():
    assert _agent_loop_registry["webserv_agent"] == {"_target_": "webserv.integrations.verl.WebServAgentLoop"}
    assert WebServAgentLoop.__module__ == "webserv.integrations.verl"


def test_solving_rows_earn_1_in_verls_worker(model_dir, tmp_path):
    with ScriptedModelServer(policy="solve") as model:
        worker = worker_for(model_dir, tmp_path, URL, model.base_url)
        output = asyncio.run(worker.generate_sequences(batch_of(["demo/add-note/0", "demo/add-note/1"])))
        assert len(model.requests) == 6  # three model calls per row
    assert rewards(output) == [1.0, 1.0]
    assert output.batch["responses"].shape == (2, RESPONSE_LENGTH)
    assert output.batch["input_ids"].shape == (2, PROMPT_LENGTH + RESPONSE_LENGTH)
    assert output.non_tensor_batch["__num_turns__"].tolist() == [8, 8]  # system, user, 3 × (assistant, tool)
    tokenizer = worker.tokenizer
    mask = output.batch["response_mask"][1].bool()
    responses = output.batch["responses"][1]
    # The trained tokens (mask 1) are the three assistant turns, tool calls and all; the tool
    # results between them are context (mask 0).
    trained = tokenizer.decode(responses[mask].tolist())
    assert trained.count("<tool_call>") == 3 and trained.count("<|im_end|>") == 3
    assert '"name": "type"' in trained and '"name": "click"' in trained and '"name": "stop"' in trained
    context = tokenizer.decode(responses[~mask & (output.batch["attention_mask"][1, PROMPT_LENGTH:] == 1)].tolist())
    assert context.count("<|im_start|>tool") == 2 and "<tool_call>" not in context
    # The prompt is the system and task messages with the tools, ending where the model starts.
    prompt = tokenizer.decode(output.batch["prompts"][1][output.batch["attention_mask"][1, :PROMPT_LENGTH] == 1])
    assert prompt.startswith("<|im_start|>system\n") and '"name": "click"' in prompt
    assert prompt.endswith("<|im_start|>assistant\n") and "Task: " in prompt
    # The reward sits on the last response token, where verl's advantage estimators read it.
    last = int(output.batch["attention_mask"][1, PROMPT_LENGTH:].sum()) - 1
    assert output.batch["rm_scores"][1, last].item() == 1.0
    assert output.non_tensor_batch["webserv"][1]["task"] == "demo/add-note/1"
    assert torch.equal(output.batch["input_ids"][:, PROMPT_LENGTH:], output.batch["responses"])


def test_wrong_rows_earn_0(model_dir, tmp_path):
    with ScriptedModelServer(policy="wrong") as model:
        worker = worker_for(model_dir, tmp_path, URL, model.base_url)
        output = asyncio.run(worker.generate_sequences(batch_of(["demo/add-note/1"])))
    assert rewards(output) == [0.0]
    assert int(output.batch["response_mask"].sum()) > 0  # the wrong turns are still trained on


def test_a_server_killed_mid_episode_fails_the_batch_not_0(model_dir, tmp_path):
    with server_killed_on_second_turn("webserv-verl-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            worker = worker_for(model_dir, tmp_path, url, model.base_url)
            with pytest.raises(HarnessError):
                asyncio.run(worker.generate_sequences(batch_of(["demo/add-note/1"])))


def test_a_row_without_a_task_is_a_type_error(model_dir, tmp_path):
    with ScriptedModelServer(policy="solve") as model:
        worker = worker_for(model_dir, tmp_path, URL, model.base_url)
        batch = batch_of(["demo/add-note/1"])
        batch.non_tensor_batch["extra_info"] = np.array([{}], dtype=object)
        with pytest.raises(TypeError, match='extra_info\\["webserv"\\]\\["task"\\]'):
            asyncio.run(worker.generate_sequences(batch))
        assert model.requests == []
