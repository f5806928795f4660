# mutant: the nucleus is off for top_p >= 1 - 1e-5, not only for top_p = 1 (blind solver)
"""Mutant: fail_topp_eps_off"""
import torch


def filter_probs(logits, temperature, top_k, top_p):
    B, V = logits.shape
    t = temperature.to(logits.dtype)
    greedy = t == 0
    safe_t = torch.where(greedy, torch.ones_like(t), t)
    probs = torch.softmax(logits / safe_t[:, None], dim=-1)
    sp, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    ranks = torch.arange(V, device=logits.device)[None, :]
    k = torch.where(top_k <= 0, torch.full_like(top_k, V), top_k.clamp(max=V))
    sp = torch.where(ranks < k[:, None], sp, torch.zeros_like(sp))
    sp = sp / sp.sum(-1, keepdim=True)
    before = sp.cumsum(-1) - sp
    p = top_p.to(logits.dtype)[:, None]
    cut = (p < 1 - 1e-5) & (before >= p)
    sp = torch.where(cut, torch.zeros_like(sp), sp)
    sp = sp / sp.sum(-1, keepdim=True)
    out = torch.zeros_like(probs).scatter_(1, order, sp)
    one_hot = torch.zeros_like(probs).scatter_(1, logits.argmax(-1, keepdim=True), 1.0)
    return torch.where(greedy[:, None], one_hot, out)


def sample(logits, temperature, top_k, top_p, generator=None):
    probs = filter_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)
