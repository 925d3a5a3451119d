"""End-to-end RL smoke test: TRL's ``GRPOTrainer`` runs 2 steps on the
CPU with maptab's reward on a handful of ``mini`` samples exported with
``maptab export --format trl``.

The policy is a tiny randomly initialised causal LM built from a config, the tokenizer a
word-level one trained here on the prompts with the ``tokenizers`` library: nothing is
downloaded (``HF_HUB_OFFLINE=1``). Needs the optional extra ``maptab[rl]``; skipped with a
reason otherwise (``make test-rl`` installs it and runs this file).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.rl

trl = pytest.importorskip("trl", reason="needs maptab[rl] (trl, transformers, torch): make test-rl")
transformers = pytest.importorskip("transformers", reason="needs maptab[rl]: make test-rl")
torch = pytest.importorskip("torch", reason="needs maptab[rl]: make test-rl")
tokenizers = pytest.importorskip("tokenizers", reason="needs maptab[rl]: make test-rl")
datasets = pytest.importorskip("datasets", reason="needs maptab[rl]: make test-rl")

from maptab.generate.pipeline import build_benchmark  # noqa: E402
from maptab.rewards.export import export_rl  # noqa: E402
from maptab.rewards.trl import REFERENCE_COLUMN, maptab_reward  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


def _tokenizer(texts: list[str]) -> transformers.PreTrainedTokenizerFast:
    """A word-level tokenizer trained on ``texts`` (every word of the prompts and the
    station names is a token, so prompts stay short for the tiny model)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation()]
    )
    specials = ["<unk>", "<pad>", "</s>", "<s>", "<user>", "<assistant>"]
    tok.train_from_iterator(
        [*texts, "<route_begin> <route_end> (transfer) -"],
        trainers.WordLevelTrainer(vocab_size=4000, special_tokens=specials),
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="</s>",
        bos_token="<s>",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def test_grpo_two_steps_with_maptab_reward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("WANDB_DISABLED", "true")
    ds_dir = tmp_path / "mini"
    build_benchmark(ds_dir, preset="mini", seed=9)
    out = export_rl(ds_dir, tmp_path / "trl", "trl", images=False)
    data = datasets.load_dataset(
        "parquet", data_files={"train": str(out / "train-00000-of-00001.parquet")}
    )
    # a handful of short samples: QA questions and edge-table route queries
    train = data["train"].filter(lambda r: r["kind"] in ("qa", "rp"))
    train = train.sort("id").select(range(4))
    assert REFERENCE_COLUMN in train.column_names

    tokenizer = _tokenizer([r["prompt"][0]["content"] for r in train])
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)

    calls: list[list[float]] = []
    shapes: list[type] = []

    def reward(prompts, completions, **kwargs):  # the adapter, recorded
        values = maptab_reward(prompts, completions, **kwargs)
        calls.append(values)
        shapes.extend(type(c) for c in completions)
        return values

    reward.__name__ = "maptab_reward"
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        max_steps=2,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=0,
        dataloader_num_workers=0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=args,
        train_dataset=train,
        processing_class=tokenizer,
    )
    trainer.train()

    assert trainer.state.global_step == 2
    assert calls, "the reward was never called"
    assert all(0.0 <= v <= 1.0 for values in calls for v in values)
    assert set(shapes) == {list}  # conversational prompts: completions are message lists
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) >= 2
    # the logged mean reward is the mean of what maptab's reward returned
    assert all(0.0 <= h["reward"] <= 1.0 for h in logged)
