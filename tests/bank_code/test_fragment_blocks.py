"""Behaviour tests for answer fragments: statements lifted from a training or decode loop,
run with the names their surrounding code would define (rl, fa, smx topics)."""

from __future__ import annotations

import numpy as np
import torch

from tests.bank_code.blocks import load_block
from tests.bank_code.numerics import INF, close


def _gae_row(rew: list[float], values: list[float], gamma: float, lam: float) -> list[float]:
    """A_t = sum over l of (gamma lam)^l delta_{t+l}, V = 0 after the last token."""
    n = len(rew)
    nxt = [*values[1:], 0.0]
    delta = [rew[t] + gamma * nxt[t] - values[t] for t in range(n)]
    return [sum((gamma * lam) ** (j - t) * delta[j] for j in range(t, n)) for t in range(n)]


def test_gae_over_a_padded_batch() -> None:
    torch.manual_seed(0)
    lengths, width = (3, 5, 1), 5
    mask = torch.tensor([[1.0] * n + [0.0] * (width - n) for n in lengths], dtype=torch.float64)
    rew = torch.randn(3, width, dtype=torch.float64) * mask
    values = torch.randn(3, width, dtype=torch.float64) + 100.0 * (1 - mask)  # junk on padding
    ns = load_block(
        "rl-ppo-gae-critic", 0, rew=rew, values=values, mask=mask, T=width, gamma=0.99, lam=0.95
    )
    raw = [
        _gae_row(rew[b, :n].tolist(), values[b, :n].tolist(), 0.99, 0.95)
        for b, n in enumerate(lengths)
    ]
    flat = torch.tensor([a for row in raw for a in row], dtype=torch.float64)
    for b, n in enumerate(lengths):
        close(ns["ret"][b, :n], torch.tensor(raw[b], dtype=torch.float64) + values[b, :n], 1e-10)
        whitened = (torch.tensor(raw[b], dtype=torch.float64) - flat.mean()) / (flat.std() + 1e-8)
        close(ns["adv"][b, :n], whitened, 1e-10)
        assert not ns["adv"][b, n:].any()


def _grpo(rewards: torch.Tensor, group: int, mask: torch.Tensor) -> dict:
    logp = torch.zeros(mask.shape)  # policy, old policy and reference all agree
    names = {"G": group, "logp": logp, "old_logp": logp, "ref_logp": logp, "mask": mask}
    return load_block("rl-grpo-vs-ppo", 0, rewards=rewards, eps=0.2, beta=0.04, **names)


def test_grpo_group_advantages_and_loss() -> None:
    mask = torch.ones(8, 3)
    mask[0, 1:] = 0  # a short response
    ns = _grpo(torch.tensor([1.0, 0.0, 0.0, 1.0, 5.0, 5.0, 5.0, 6.0]), 4, mask)
    adv = ns["adv"].view(2, 4)
    close(adv.mean(1), torch.zeros(2), 1e-6)  # centred within each group
    close(adv.std(1), torch.ones(2), 1e-4)  # unit spread within each group
    close(ns["loss"], -ns["adv"].mean(), 1e-6)  # ratio 1, KL 0: the loss is -mean(adv)
    ns = _grpo(torch.ones(8), 4, mask)
    assert not ns["adv"].any() and ns["loss"].item() == 0.0  # equal rewards: no signal, no NaN


def test_ppo_clipped_objective() -> None:
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0])
    old = torch.zeros(4)
    logp = torch.log(torch.tensor([1.5, 0.5, 1.5, 0.5]))
    ns = load_block(
        "rl-ppo-clipped-objective",
        0,
        logp=logp,
        old_logp=old,
        adv=adv,
        eps=0.2,
        masked_mean=lambda x, m: (x * m).sum() / m.sum(),
        resp_mask=torch.ones(4),
        v=torch.zeros(4),
        ret=torch.zeros(4),
        vf_coef=0.5,
    )
    # a good action's gain is capped at 1.2; a bad one's ratio is not clipped below 0.8
    close(ns["pg"], torch.tensor([-1.2, -0.5, 1.5, 0.8]))


def test_split_kv_combine_is_exact() -> None:
    torch.manual_seed(0)
    q, k, v = (
        torch.randn(2, 8, dtype=torch.float64),
        torch.randn(13, 8, dtype=torch.float64),
        torch.randn(13, 8, dtype=torch.float64),
    )
    splits = [(0, 5), (5, 5), (5, 13)]  # the middle split is empty
    lse_parts, o_parts = [], []
    for a, b in splits:
        s = q @ k[a:b].T
        if b > a:
            lse_parts.append(torch.logsumexp(s, -1))
            o_parts.append(torch.softmax(s, -1) @ v[a:b])
        else:
            lse_parts.append(torch.full((2,), -INF, dtype=torch.float64))
            o_parts.append(torch.zeros(2, 8, dtype=torch.float64))
    ns = load_block(
        "fa-flashdecoding-split-kv", 0, lse_s=torch.stack(lse_parts), O_s=torch.stack(o_parts)
    )
    close(ns["O"], torch.softmax(q @ k.T, -1) @ v, 1e-12)
    close(ns["lse"], torch.logsumexp(q @ k.T, -1), 1e-12)
    empty = load_block(
        "fa-flashdecoding-split-kv", 0, lse_s=torch.full((3, 2), -INF), O_s=torch.zeros(3, 2, 8)
    )
    assert not empty["O"].isnan().any() and not empty["O"].any()  # no keys at all: zeros


def test_welford_update_matches_two_pass_variance() -> None:
    rng = np.random.default_rng(0)
    for data in ([5.0], [1e9 + 1, 1e9 + 2, 1e9 + 3], list(rng.normal(3.0, 2.0, 500))):
        state = {"n": 0, "mean": 0.0, "M2": 0.0}
        for x in data:
            ns = load_block("smx-variance-welford", 0, x=x, **state)
            state = {key: ns[key] for key in state}
        assert abs(ns["var"] - np.var(data)) <= 1e-9 * max(1.0, np.var(data))
        assert abs(state["mean"] - np.mean(data)) <= 1e-9 * abs(np.mean(data))
