"""Behaviour tests for the distributed and systems answers (comm, dist, serv, spec, fuse,
gemm, ml, sys topics): collectives simulated rank by rank, graph passes and schedulers
against brute force, the speculative-decoding rule against the target distribution."""

from __future__ import annotations

import queue
import random
import threading
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.bank_code.blocks import load_block


def test_reduce_scatter_via_all_to_all() -> None:
    rs = load_block("comm-reducescatter-vs-alltoall", 0)["reduce_scatter_via_all_to_all"]
    assert rs([]) == []
    for p, n in ((1, 5), (2, 4), (4, 12)):
        xs = [torch.arange(n, dtype=torch.float64) * (r + 1) for r in range(p)]
        total = torch.stack(xs).sum(0)
        for r, got in enumerate(rs(xs)):
            torch.testing.assert_close(got, total[r * n // p : (r + 1) * n // p])
    with pytest.raises(ValueError):
        rs([torch.zeros(5), torch.zeros(5)])


def _run_ring(p: int, chunks: list[list[torch.Tensor]], ring: Callable[..., None]) -> None:
    """Run every rank in its own thread; sendrecv delivers through one queue per rank."""
    inbox = [queue.Queue() for _ in range(p)]
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        def sendrecv(dst: int, buf: torch.Tensor, src: int) -> torch.Tensor:
            inbox[dst].put((r, buf.clone()))
            sender, got = inbox[r].get(timeout=10)
            assert sender == src
            return got

        try:
            ring(r, p, chunks[r], sendrecv)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_ring_allreduce(p: int) -> None:
    ring = load_block("comm-ring-allreduce", 0)["ring_allreduce"]
    torch.manual_seed(p)
    data = [torch.randn(p, 3) for _ in range(p)]  # rank r's buffer, p chunks of 3
    chunks = [[row.clone() for row in d] for d in data]
    _run_ring(p, chunks, ring)
    total = torch.stack(data).sum(0)
    for r in range(p):
        torch.testing.assert_close(torch.stack(chunks[r]), total)


def test_megatron_tensor_parallel_mlp() -> None:
    torch.manual_seed(0)
    partial: list[torch.Tensor] = []
    ns = load_block(
        "dist-megatron-tensor-parallelism",
        0,
        copy_to_tp_region=lambda x: x,
        reduce_from_tp_region=lambda z, group: partial.append(z) or z,
    )
    x, a, b = torch.randn(3, 8), torch.randn(8, 12), torch.randn(12, 8)
    for tp in (1, 2, 3, 4):
        partial.clear()
        cols = torch.arange(12).chunk(tp)
        for c in cols:  # A split by columns, B by rows: each rank's share is local
            ns["tp_mlp"](x, a[:, c], b[c, :], group=None)
        torch.testing.assert_close(sum(partial), F.gelu(x @ a) @ b)


def test_topological_order_and_peak_memory() -> None:
    ns = load_block("fuse-code-graph-algorithms", 0)
    rng = random.Random(0)
    for n in range(0, 7):
        edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.4]
        perm = list(range(n))
        rng.shuffle(perm)
        edges = [(perm[u], perm[v]) for u, v in edges]
        order = ns["topo_order"](n, edges)
        assert sorted(order) == list(range(n))
        assert all(order.index(u) < order.index(v) for u, v in edges)
        succ = [[v for u, v in edges if u == i] for i in range(n)]
        preds = [[u for u, v in edges if v == i] for i in range(n)]
        size = [rng.randint(1, 9) for _ in range(n)]
        peak, live = 0, set()
        for step, u in enumerate(order):  # brute force: live = produced, consumer pending
            live.add(u)
            peak = max(peak, sum(size[w] for w in live))
            done = set(order[: step + 1])
            live = {w for w in live if not succ[w] or not set(succ[w]) <= done}
        assert ns["peak_memory"](order, size, succ, preds) == peak
    with pytest.raises(ValueError):
        ns["topo_order"](2, [(0, 1), (1, 0)])
    with pytest.raises(ValueError):
        ns["topo_order"](1, [(0, 0)])


def test_conv_bn_folding() -> None:
    fold = load_block("fuse-conv-bn-folding", 0)["fold_conv_bn"]
    torch.manual_seed(0)
    conv, bn = torch.nn.Conv2d(3, 4, 3, bias=True), torch.nn.BatchNorm2d(4)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(-2, 2)
    bn.eval()
    x = torch.randn(2, 3, 6, 6)
    for bias in (conv.bias, None):
        want = bn(F.conv2d(x, conv.weight, bias))
        w, b = fold(conv.weight, bias, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.eps)
        torch.testing.assert_close(F.conv2d(x, w, b), want, rtol=1e-5, atol=1e-5)


def test_prune_2_4() -> None:
    prune = load_block("gemm-sparse-2-4-tensor-cores", 0)["prune_2_4"]
    w = torch.tensor([[1.0, -5.0, 3.0, 0.5, 0.0, 0.0, -1.0, 2.0]])
    pruned, mask = prune(w)
    assert pruned.tolist() == [[0.0, -5.0, 3.0, 0.0, 0.0, 0.0, -1.0, 2.0]]
    assert mask.reshape(-1, 4).sum(-1).tolist() == [2, 2]
    torch.manual_seed(0)
    w = torch.randn(5, 16)
    pruned, mask = prune(w)
    groups = w.abs().reshape(5, 4, 4)
    kept = (pruned.abs().reshape(5, 4, 4) * mask.reshape(5, 4, 4)).sum(-1)
    torch.testing.assert_close(kept, groups.topk(2, -1).values.sum(-1))  # the two largest
    with pytest.raises(ValueError):
        prune(torch.zeros(2, 6))


def test_svm_separates_separable_data() -> None:
    ns = load_block("ml-code-svm-from-scratch", 0)
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(2, 0.5, (40, 2)), rng.normal(-2, 0.5, (40, 2))])
    y = np.array([1] * 40 + [-1] * 40)
    w, b = ns["svm_fit"](x, y, lr=1e-2, epochs=300)
    assert (ns["svm_predict"](x, w, b) == y).mean() == 1.0
    assert set(ns["svm_predict"](np.zeros((1, 2)), w, b)) <= {1, -1}


def test_nms_against_torchvision_rule() -> None:
    nms = load_block("ml-detection-iou-nms-yolo-detr", 0)["nms"]
    assert nms(np.zeros((0, 4)), np.zeros(0)) == []
    boxes = np.array(
        [[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10], [5, 5, 5, 5]], float
    )
    scores = np.array([0.9, 0.8, 0.7, 0.95, 0.1])
    assert [int(i) for i in nms(boxes, scores, 0.5)] == [3, 2, 4]
    rng = np.random.default_rng(0)
    for _ in range(50):  # brute force: greedy by score, drop IoU above the threshold
        xy = rng.uniform(0, 20, (12, 2))
        b = np.hstack([xy, xy + rng.uniform(0, 10, (12, 2))])
        s = rng.permutation(12).astype(float)
        keep: list[int] = []
        for i in np.argsort(-s):
            ious = [_iou(b[i], b[j]) for j in keep]
            if all(v <= 0.5 for v in ious):
                keep.append(int(i))
        assert [int(i) for i in nms(b, s, 0.5)] == keep


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / max(union, 1e-12)


def test_prefix_cache_block_hashes() -> None:
    hashes = load_block("serv-prefix-cache-hashing", 0)["block_hashes"]
    assert hashes([], 4) == [] and hashes([1, 2, 3], 4) == []
    a, b = hashes(list(range(10)), 4), hashes([*range(8), 99, 98, 97], 4)
    assert len(a) == 2 and a == b  # the partial last block is not cached
    c = hashes([0, 1, 2, 9, 4, 5, 6, 7], 4)
    assert c[0] != a[0] and c[1] != a[1]  # a change poisons every later block
    assert hashes(list(range(8)), 4, extra=("lora-1",)) != a  # adapters do not share blocks


def test_speculative_acceptance_preserves_the_target_distribution() -> None:
    verify = load_block("spec-acceptance-rule-proof", 0)["verify"]
    rng = np.random.default_rng(0)
    q = np.array([[0.6, 0.3, 0.1, 0.0]])
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]])
    counts = np.zeros(4)
    for _ in range(20_000):
        draft = [rng.choice(4, p=q[0])]
        out = verify(draft, q, p, rng)
        counts[out[0]] += 1
        assert len(out) in (1, 2)
    np.testing.assert_allclose(counts / counts.sum(), p[0], atol=0.01)
    same = verify([2], p[:1], p, rng)  # q == p: always accepted, plus the bonus token
    assert same[0] == 2 and len(same) == 2


def test_timed_decorator(capsys: pytest.CaptureFixture[str]) -> None:
    timed = load_block("sys-python-decorators-imports-copy", 0)["timed"]

    @timed("step")
    def add(a: int, b: int = 1) -> int:
        """Adds."""
        return a + b

    assert add(2, b=3) == 5 and add.__name__ == "add" and add.__doc__ == "Adds."

    @timed("boom")
    def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        fail()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["step", "boom"]  # printed even on error
    assert all(float(line.split()[1]) >= 0 for line in lines)


def test_ring_transport_pairs_each_rank_with_its_neighbour() -> None:
    """The simulated sendrecv of the ring test delivers to the named rank only."""
    seen: list[tuple[int, int]] = []

    def ring(
        r: int, p: int, chunks: list[torch.Tensor], sendrecv: Callable[..., torch.Tensor]
    ) -> None:
        sendrecv(dst=(r + 1) % p, buf=chunks[0], src=(r - 1) % p)
        seen.append((r, (r + 1) % p))

    _run_ring(3, [[torch.zeros(1)] for _ in range(3)], ring)
    assert sorted(seen) == [(0, 1), (1, 2), (2, 0)]


def test_paged_kv_slot_mapping_and_cache_write() -> None:
    torch.manual_seed(0)
    num_blocks, h_kv, d = 10, 2, 3
    kv = torch.zeros(2, num_blocks, 16, h_kv, d)
    slot_mapping = torch.tensor([7 * 16 + 0, 2 * 16 + 15, 9 * 16 + 3])  # positions 0, 31, 35
    k_new, v_new = torch.randn(3, h_kv, d), torch.randn(3, h_kv, d)
    cache = {"kv": kv, "num_blocks": num_blocks, "H_kv": h_kv, "D": d}
    new = {"slot_mapping": slot_mapping, "k_new": k_new, "v_new": v_new}
    ns = load_block("serv-pagedattention-block-table", 0, **cache, **new)
    assert [ns["slot"]("req0", p) for p in (0, 15, 16, 31, 32, 35)] == [112, 127, 32, 47, 144, 147]
    torch.testing.assert_close(kv[0, 9, 3], k_new[2])  # the view writes through to the cache
    torch.testing.assert_close(kv[1, 2, 15], v_new[1])
    assert kv[0].count_nonzero() == k_new.count_nonzero()
