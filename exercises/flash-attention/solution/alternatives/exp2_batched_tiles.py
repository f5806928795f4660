# alternative: exp2 softmax, inputs padded to whole tiles, all query tiles in one batched product
"""flash-attention with all query tiles processed side by side, as one CTA per tile would.

q is padded to a whole number of block_q tiles and viewed as [B, H, n_tiles, block_q, d], so
q_tiles @ k_tile^T is one batched product of block_q x block_k tiles. Keys past Nk (padding)
and keys a causal row cannot see get -inf. The softmax runs in base 2: s2 = s * log2(e), so
exp(s - m) = exp2(s2 - m2) and the natural-log lse is (m2 + log2(l)) * ln(2).
"""

import math

import torch
import torch.nn.functional as F

LOG2E = math.log2(math.e)


def _pad_rows(x: torch.Tensor, block: int) -> torch.Tensor:
    extra = -x.shape[-2] % block
    return F.pad(x, (0, 0, 0, extra)) if extra else x


def _validate(nq: int, nk: int, causal: bool) -> None:
    if causal and nq > nk:
        raise ValueError(f"causal attention needs Nq <= Nk, got Nq = {nq}, Nk = {nk}")


def flash_attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    bsz, heads, nq, d = q.shape
    nk = k.shape[-2]
    _validate(nq, nk, causal)
    scale2 = LOG2E / math.sqrt(d)
    qt = _pad_rows(q, block_q).reshape(bsz, heads, -1, block_q, d)
    tiles = qt.shape[2]
    row = torch.arange(tiles * block_q, device=q.device).reshape(tiles, block_q, 1)
    m2 = torch.full(qt.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)
    ell = torch.zeros_like(m2)
    acc = torch.zeros_like(qt)
    for c0 in range(0, nk, block_k):
        kt = _pad_rows(k[..., c0 : c0 + block_k, :], block_k).unsqueeze(2)
        vt = _pad_rows(v[..., c0 : c0 + block_k, :], block_k).unsqueeze(2)
        col = torch.arange(c0, c0 + block_k, device=q.device).reshape(1, 1, block_k)
        keep = col < nk
        if causal:
            keep = keep & (col <= row + (nk - nq))
        s2 = (qt @ kt.transpose(-1, -2)) * scale2
        s2 = s2.masked_fill(~keep, -math.inf)
        new_max = torch.maximum(m2, s2.amax(dim=-1))
        # padded query rows of a causal call can have nothing visible yet: keep them finite
        safe = torch.where(torch.isfinite(new_max), new_max, 0.0)
        p = torch.exp2(s2 - safe[..., None])
        shrink = torch.exp2(m2 - safe)
        ell = ell * shrink + p.sum(dim=-1)
        acc = acc * shrink[..., None] + p @ vt
        m2 = new_max
    o = (acc / ell[..., None]).reshape(bsz, heads, -1, d)[..., :nq, :]
    lse = ((m2 + torch.log2(ell)) / LOG2E).reshape(bsz, heads, -1)[..., :nq]
    return o.contiguous(), lse.contiguous()


def flash_attention_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    bsz, heads, nq, d = q.shape
    nk = k.shape[-2]
    _validate(nq, nk, causal)
    scale = 1.0 / math.sqrt(d)
    kt = _pad_rows(k, block_k).reshape(bsz, heads, -1, block_k, d)
    vt = _pad_rows(v, block_k).reshape(bsz, heads, -1, block_k, d)
    col = torch.arange(kt.shape[2] * block_k, device=q.device).reshape(-1, 1, block_k)
    dkt, dvt = torch.zeros_like(kt), torch.zeros_like(vt)
    dq = torch.empty_like(q)
    lse2 = lse * LOG2E
    big_d = (do * o).sum(dim=-1)
    for r0 in range(0, nq, block_q):
        qi = q[..., r0 : r0 + block_q, :].unsqueeze(2)
        doi = do[..., r0 : r0 + block_q, :].unsqueeze(2)
        rows = torch.arange(r0, r0 + qi.shape[-2], device=q.device).reshape(1, -1, 1)
        keep = col < nk
        if causal:
            keep = keep & (col <= rows + (nk - nq))
        s2 = (qi @ kt.transpose(-1, -2)) * (scale * LOG2E)
        p = torch.exp2(
            s2.masked_fill(~keep, -math.inf)
            - lse2[..., r0 : r0 + block_q, None, None].transpose(-2, -3)
        )
        dvt += p.transpose(-1, -2) @ doi
        ds = p * (
            doi @ vt.transpose(-1, -2) - big_d[..., r0 : r0 + block_q, None, None].transpose(-2, -3)
        )
        dq[..., r0 : r0 + block_q, :] = (ds @ kt).sum(dim=2) * scale
        dkt += (ds.transpose(-1, -2) @ qi) * scale
    dk = dkt.reshape(bsz, heads, -1, d)[..., :nk, :]
    dv = dvt.reshape(bsz, heads, -1, d)[..., :nk, :]
    return dq, dk.contiguous(), dv.contiguous()
