# alternative: query tiles side by side as a padded 5-D batch, one loop over key tiles
import math

import torch
import torch.nn.functional as F


def _pad_tiles(x, block):
    # x [B, H, N, d] -> [B, H, n, block, d], zero-padded
    B, H, N, d = x.shape
    n = (N + block - 1) // block
    xp = F.pad(x, (0, 0, 0, n * block - N))
    return xp.reshape(B, H, n, block, d), n


def flash_attention_forward(q, k, v, causal=False, block_q=64, block_k=64):
    B, H, Nq, d = q.shape
    Nk = k.shape[2]
    if causal and Nq > Nk:
        raise ValueError("causal attention with more queries than keys")
    off = Nk - Nq
    scale = d**-0.5
    qt, nq = _pad_tiles(q, block_q)
    rows = torch.arange(nq * block_q, device=q.device).reshape(nq, block_q, 1)
    m = torch.full((B, H, nq, block_q), -math.inf, dtype=q.dtype, device=q.device)
    row_sum = torch.zeros_like(m)
    acc = torch.zeros_like(qt)
    last_row = Nq - 1
    for j0 in range(0, Nk, block_k):
        if causal and j0 > last_row + off:
            break
        kt = k[:, :, j0 : j0 + block_k].unsqueeze(2)  # [B, H, 1, bk, d]
        vt = v[:, :, j0 : j0 + block_k].unsqueeze(2)
        s = (qt @ kt.transpose(-1, -2)) * scale  # [B, H, nq, bq, bk], tiles kept apart
        if causal:
            cols = torch.arange(j0, j0 + kt.shape[3], device=q.device).reshape(1, 1, -1)
            s = s.masked_fill(cols > rows + off, -math.inf)
        m_new = torch.maximum(m, s.amax(-1))
        # rows (padded, or masked so far) whose max is still -inf: keep them at 0
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - safe.unsqueeze(-1))
        alpha = torch.exp(m - safe)
        row_sum = row_sum * alpha + p.sum(-1)
        acc = acc * alpha.unsqueeze(-1) + p @ vt
        m = m_new
    o = (acc / row_sum.unsqueeze(-1)).reshape(B, H, nq * block_q, d)[:, :, :Nq]
    lse = (m + torch.log(row_sum)).reshape(B, H, nq * block_q)[:, :, :Nq]
    return o.contiguous(), lse.contiguous()


def flash_attention_backward(q, k, v, o, lse, do, causal=False, block_q=64, block_k=64):
    B, H, Nq, d = q.shape
    Nk = k.shape[2]
    if causal and Nq > Nk:
        raise ValueError("causal attention with more queries than keys")
    off = Nk - Nq
    scale = d**-0.5
    kt, nk = _pad_tiles(k, block_k)  # key tiles side by side [B, H, nk, bk, d]
    vt, _ = _pad_tiles(v, block_k)
    cols = torch.arange(nk * block_k, device=q.device).reshape(nk, 1, block_k)
    valid_k = cols < Nk
    Dall = (do * o).sum(-1)
    dq = torch.zeros_like(q)
    dkt = torch.zeros_like(kt)
    dvt = torch.zeros_like(vt)
    for i0 in range(0, Nq, block_q):
        i1 = min(i0 + block_q, Nq)
        qi = q[:, :, i0:i1].unsqueeze(2)  # [B, H, 1, bq, d]
        doi = do[:, :, i0:i1].unsqueeze(2)
        Li = lse[:, :, i0:i1].reshape(B, H, 1, -1, 1)
        Di = Dall[:, :, i0:i1].reshape(B, H, 1, -1, 1)
        rows = torch.arange(i0, i1, device=q.device).reshape(1, -1, 1)
        keep = valid_k
        if causal:
            keep = keep & (cols <= rows + off)
        s = (qi @ kt.transpose(-1, -2)) * scale  # [B, H, nk, bq, bk]
        p = torch.where(keep, torch.exp(s - Li), torch.zeros((), dtype=s.dtype, device=s.device))
        dvt += p.transpose(-1, -2) @ doi
        dp = doi @ vt.transpose(-1, -2)
        ds = p * (dp - Di)
        dq[:, :, i0:i1] += scale * (ds @ kt).sum(2)
        dkt += scale * (ds.transpose(-1, -2) @ qi)
    dk = dkt.reshape(B, H, nk * block_k, d)[:, :, :Nk].contiguous()
    dv = dvt.reshape(B, H, nk * block_k, d)[:, :, :Nk].contiguous()
    return dq, dk, dv
