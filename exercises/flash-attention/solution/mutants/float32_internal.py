# mutant: the forward computes in float32 even for float64 inputs
import math
import torch


def _check(q, k, causal):
    Nq, Nk = q.shape[-2], k.shape[-2]
    if causal and Nq > Nk:
        raise ValueError("causal attention needs Nq <= Nk")
    return Nq, Nk


def flash_attention_forward(q, k, v, causal=False, block_q=64, block_k=64):
    Nq, Nk = _check(q, k, causal)
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    off = Nk - Nq
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=q.dtype, device=q.device)
    q32, k32, v32 = q.float(), k.float(), v.float()
    for i in range(0, Nq, block_q):
        qt = q32[..., i:i + block_q, :]
        bq = qt.shape[-2]
        m = torch.full(qt.shape[:-1], float("-inf"), dtype=torch.float32, device=q.device)
        l = torch.zeros(qt.shape[:-1], dtype=torch.float32, device=q.device)
        acc = torch.zeros_like(qt)
        rows = torch.arange(i, i + bq, device=q.device)
        for j in range(0, Nk, block_k):
            if causal and j > i + bq - 1 + off:
                break
            kt = k32[..., j:j + block_k, :]
            vt = v32[..., j:j + block_k, :]
            s = (qt @ kt.transpose(-1, -2)) * scale
            if causal:
                cols = torch.arange(j, j + kt.shape[-2], device=q.device)
                mask = cols[None, :] > rows[:, None] + off
                s = s.masked_fill(mask, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)
            l = l * alpha + p.sum(-1)
            acc = acc * alpha[..., None] + p @ vt
            m = m_new
        o[..., i:i + bq, :] = acc / l[..., None]
        lse[..., i:i + bq] = m + torch.log(l)
    return o, lse


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
        kt = k[..., j:j + block_k, :]
        vt = v[..., j:j + block_k, :]
        bk = kt.shape[-2]
        cols = torch.arange(j, j + bk, device=q.device)
        dkt = torch.zeros_like(kt)
        dvt = torch.zeros_like(vt)
        for i in range(0, Nq, block_q):
            qt = q[..., i:i + block_q, :]
            bq = qt.shape[-2]
            if causal and j > i + bq - 1 + off:
                continue
            dot = do[..., i:i + bq, :]
            s = (qt @ kt.transpose(-1, -2)) * scale
            p = torch.exp(s - lse[..., i:i + bq, None])
            if causal:
                rows = torch.arange(i, i + bq, device=q.device)
                mask = cols[None, :] > rows[:, None] + off
                p = p.masked_fill(mask, 0.0)
            dvt += p.transpose(-1, -2) @ dot
            dp = dot @ vt.transpose(-1, -2)
            ds = p * (dp - D[..., i:i + bq, None])
            dq[..., i:i + bq, :] += scale * (ds @ kt)
            dkt += scale * (ds.transpose(-1, -2) @ qt)
        dk[..., j:j + bk, :] = dkt
        dv[..., j:j + bk, :] = dvt
    return dq, dk, dv
