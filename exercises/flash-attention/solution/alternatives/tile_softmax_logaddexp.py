# alternative: softmax and logsumexp per tile (at most block_k entries), merged with logaddexp
import math

import torch


def _check(q, k, causal):
    Nq, Nk = q.shape[-2], k.shape[-2]
    if causal and Nq > Nk:
        raise ValueError("causal attention needs Nq <= Nk")
    return Nq, Nk


def flash_attention_forward(q, k, v, causal=False, block_q=64, block_k=64):
    Nq, Nk = _check(q, k, causal)
    scale = 1.0 / math.sqrt(q.shape[-1])
    off = Nk - Nq
    outs, lses = [], []
    for i in range(0, Nq, block_q):
        qt = q[..., i : i + block_q, :]
        bq = qt.shape[-2]
        rows = torch.arange(i, i + bq, device=q.device)
        o_run = None
        lse_run = None
        for j in range(0, Nk, block_k):
            if causal and j > i + bq - 1 + off:
                break
            kt, vt = k[..., j : j + block_k, :], v[..., j : j + block_k, :]
            s = torch.matmul(qt, kt.transpose(-1, -2)) * scale
            if causal:
                cols = torch.arange(j, j + kt.shape[-2], device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None] + off, -math.inf)
            lse_t = torch.logsumexp(s, dim=-1)
            p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
            o_t = p @ vt
            if o_run is None:
                o_run, lse_run = o_t, lse_t
                continue
            new = torch.logaddexp(lse_run, lse_t)
            w_old = torch.exp(lse_run - new)
            w_new = torch.exp(lse_t - new)
            o_run = o_run * w_old[..., None] + o_t * w_new[..., None]
            lse_run = new
        outs.append(o_run)
        lses.append(lse_run)
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)


def flash_attention_backward(q, k, v, o, lse, do, causal=False, block_q=64, block_k=64):
    Nq, Nk = _check(q, k, causal)
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    off = Nk - Nq
    D = (do * o).sum(-1)
    dq = torch.zeros_like(q)
    dk = torch.zeros_like(k)
    dv = torch.zeros_like(v)
    for j in range(0, Nk, block_k):
        kt = k[..., j : j + block_k, :]
        vt = v[..., j : j + block_k, :]
        bk = kt.shape[-2]
        cols = torch.arange(j, j + bk, device=q.device)
        dkt = torch.zeros_like(kt)
        dvt = torch.zeros_like(vt)
        for i in range(0, Nq, block_q):
            qt = q[..., i : i + block_q, :]
            bq = qt.shape[-2]
            if causal and j > i + bq - 1 + off:
                continue
            dot = do[..., i : i + bq, :]
            s = (qt @ kt.transpose(-1, -2)) * scale
            p = torch.exp(s - lse[..., i : i + bq, None])
            if causal:
                rows = torch.arange(i, i + bq, device=q.device)
                mask = cols[None, :] > rows[:, None] + off
                p = p.masked_fill(mask, 0.0)
            dvt += p.transpose(-1, -2) @ dot
            dp = dot @ vt.transpose(-1, -2)
            ds = p * (dp - D[..., i : i + bq, None])
            dq[..., i : i + bq, :] += scale * (ds @ kt)
            dkt += scale * (ds.transpose(-1, -2) @ qt)
        dk[..., j : j + bk, :] = dkt
        dv[..., j : j + bk, :] = dvt
    return dq, dk, dv
