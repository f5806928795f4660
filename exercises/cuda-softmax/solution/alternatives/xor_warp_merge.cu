// alternative: one block per row, online (m, d) walk, xor-shuffle warp merge, warp 0 merges warps
#include <cuda_runtime.h>
#include <math.h>

namespace {

constexpr int MAX_THREADS = 1024;
constexpr int WARPS = MAX_THREADS / 32;

struct State {
    float m;
    float d;
};

__device__ __forceinline__ State merge(State a, State b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return State{m, 0.0f};
    return State{m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m)};
}

__device__ __forceinline__ State warp_merge(State s) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        State o;
        o.m = __shfl_xor_sync(0xffffffffu, s.m, off);
        o.d = __shfl_xor_sync(0xffffffffu, s.d, off);
        s = merge(s, o);
    }
    return s;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ State warp_state[WARPS];
    __shared__ State row_state;
    const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;

    State s{-INFINITY, 0.0f};
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float v = in[j];
        const float m_new = fmaxf(s.m, v);
        if (m_new != -INFINITY) s.d = s.d * __expf(s.m - m_new) + __expf(v - m_new);
        s.m = m_new;
    }
    s = warp_merge(s);
    if (lane == 0) warp_state[warp] = s;
    __syncthreads();
    if (warp == 0) {
        State t = lane < nwarps ? warp_state[lane] : State{-INFINITY, 0.0f};
        t = warp_merge(t);
        if (lane == 0) row_state = t;
    }
    __syncthreads();
    const State r = row_state;
    const float inv = r.d > 0.0f ? 1.0f / r.d : 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        out[j] = inv == 0.0f ? 0.0f : __expf(in[j] - r.m) * inv;
    }
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
    int threads = 32;
    while (threads < cols && threads < 1024) threads <<= 1;
    if (threads > 256 && cols < 4096) threads = 256;
    softmax_rows<<<rows, threads>>>(x, y, cols);
}
