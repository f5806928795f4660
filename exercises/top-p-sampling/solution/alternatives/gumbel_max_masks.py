# alternative: masks from each token's rank, float64 inside, Gumbel-max draws (blind solver)
"""Masks built in vocabulary order from each token's rank; the distribution is the softmax
of the masked scaled logits (the survivors renormalised); Gumbel-max draws from the
generator. Computes in float64 inside."""

import torch


def filter_probs(logits, temperature, top_k, top_p):
    B, V = logits.shape
    dev = logits.device
    z = logits.to(torch.float64)
    t = temperature.to(torch.float64)
    greedy = t == 0
    scaled = z / torch.where(greedy, torch.ones_like(t), t).unsqueeze(1)
    pr = torch.softmax(scaled, dim=1)
    order = torch.argsort(-pr, dim=1, stable=True)
    rank = torch.empty_like(order).scatter_(1, order, torch.arange(V, device=dev).expand(B, V))
    kk = top_k.clone()
    kk[kk <= 0] = V
    keep_k = rank < kk.unsqueeze(1)
    sp = torch.gather(pr, 1, order) * (torch.gather(keep_k, 1, order)).to(pr.dtype)
    kept_mass = sp.sum(1, keepdim=True)
    before_sorted = torch.cumsum(sp, 1) - sp  # unnormalised mass before each rank
    before = torch.gather(before_sorted, 1, rank)  # back to vocabulary order
    pp = top_p.to(torch.float64).unsqueeze(1)
    keep_p = (pp >= 1) | ((before / kept_mass) < pp)
    keep = keep_k & keep_p
    masked = torch.where(keep, scaled, torch.full_like(scaled, float("-inf")))
    out = torch.softmax(masked, dim=1)
    onehot = torch.nn.functional.one_hot(z.argmax(1), V).to(torch.float64)
    out = torch.where(greedy.unsqueeze(1), onehot, out)
    return out.to(logits.dtype)


def sample(logits, temperature, top_k, top_p, generator=None):
    probs = filter_probs(logits, temperature, top_k, top_p)
    u = torch.rand(probs.shape, generator=generator, device=probs.device, dtype=torch.float64)
    g = -torch.log(-torch.log(u))
    score = torch.log(probs.to(torch.float64)) + g
    score = torch.where(probs > 0, score, torch.full_like(score, float("-inf")))
    return score.argmax(1)
