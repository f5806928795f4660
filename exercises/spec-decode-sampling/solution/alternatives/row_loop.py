# alternative: a Python loop over the rows and positions, each decision taken with the
# ratio min(1, p / q) and each extra token drawn on its own
"""Speculative verification, one row at a time."""

import torch


def _draw(dist: torch.Tensor, generator: torch.Generator | None) -> int:
    return int(torch.multinomial(dist, 1, generator=generator))


def verify(draft_tokens, q, p, generator=None):
    b, k = draft_tokens.shape
    tokens = torch.full((b, k + 1), -1, dtype=torch.int64, device=p.device)
    lengths = torch.zeros(b, dtype=torch.int64, device=p.device)
    for row in range(b):
        out = []
        for i in range(k):
            x = int(draft_tokens[row, i])
            px, qx = float(p[row, i, x]), float(q[row, i, x])
            ratio = 1.0 if (qx == 0.0 and px > 0.0) else (0.0 if qx == 0.0 else px / qx)
            u = float(torch.rand((), generator=generator, device=p.device))
            if u < min(1.0, ratio):
                out.append(x)
                continue
            residual = torch.clamp(p[row, i] - q[row, i], min=0)
            if float(residual.sum()) <= 0.0:
                residual = p[row, i]
            out.append(_draw(residual / residual.sum(), generator))
            break
        else:
            out.append(_draw(p[row, k], generator))
        tokens[row, : len(out)] = torch.tensor(out, dtype=torch.int64, device=p.device)
        lengths[row] = len(out)
    return tokens, lengths


def verify_greedy(draft_tokens, p):
    b, k = draft_tokens.shape
    tokens = torch.full((b, k + 1), -1, dtype=torch.int64, device=p.device)
    lengths = torch.zeros(b, dtype=torch.int64, device=p.device)
    for row in range(b):
        out = []
        for i in range(k + 1):
            best = int(torch.argmax(p[row, i]))
            if i < k and int(draft_tokens[row, i]) == best:
                out.append(best)
                continue
            out.append(best)
            break
        tokens[row, : len(out)] = torch.tensor(out, dtype=torch.int64, device=p.device)
        lengths[row] = len(out)
    return tokens, lengths
