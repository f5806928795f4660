// Row softmax of a float32 [rows, cols] matrix: one block per row, one pass for (m, d).
//
// Every thread walks its columns of the row (j = tid, tid + blockDim.x, ...) with a running
// max m and a running sum d of exp(x - m), rescaled by exp(m_old - m_new) when the max grows.
// The block merges its threads' (m, d) states (warp shuffles, then one state per warp in
// shared memory), and a second walk over the row writes exp(x - M) / D. A row of only -inf
// has M = -inf and D = 0 and is written as zeros.
#include <cuda_runtime.h>

#include <math.h>

namespace {

constexpr int MAX_THREADS = 1024;
constexpr int WARPS = MAX_THREADS / 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

struct State {
    float m;  // running max
    float d;  // sum of exp(x - m)
};

__device__ __forceinline__ State merge(State a, State b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) {  // both empty or all -inf: exp(-inf - -inf) would be NaN
        return {m, a.d + b.d};
    }
    return {m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m)};
}

__device__ __forceinline__ State warp_merge(State s) {
    // butterfly: after offsets 16, 8, 4, 2, 1 every lane holds the warp's state
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        State other;
        other.m = __shfl_xor_sync(FULL_MASK, s.m, offset);
        other.d = __shfl_xor_sync(FULL_MASK, s.d, offset);
        s = merge(s, other);
    }
    return s;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ State warp_state[WARPS];
    __shared__ State row_state;
    const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    // 1. one pass over this thread's columns
    State s = {-INFINITY, 0.0f};
    for (int j = tid; j < cols; j += blockDim.x) {
        const float v = in[j];
        const float m = fmaxf(s.m, v);
        if (m != -INFINITY) {
            s.d = s.d * __expf(s.m - m) + __expf(v - m);
            s.m = m;
        }
    }

    // 2. merge: each warp with shuffles, then warp 0 over the warps' states
    s = warp_merge(s);
    if (lane == 0) {
        warp_state[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        State w = lane < warps ? warp_state[lane] : State{-INFINITY, 0.0f};
        w = warp_merge(w);
        if (lane == 0) {
            row_state = w;
        }
    }
    __syncthreads();
    const State total = row_state;

    // 3. normalising write; an all -inf row (d == 0) is written as zeros
    const float inv = total.d > 0.0f ? 1.0f / total.d : 0.0f;
    for (int j = tid; j < cols; j += blockDim.x) {
        out[j] = inv > 0.0f ? __expf(in[j] - total.m) * inv : 0.0f;
    }
}

}  // namespace

// x, y: device pointers to row-major [rows, cols] float32 matrices.
extern "C" void solve(const float* x, float* y, int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    // enough threads for about 8 columns each, a whole number of warps, 32 to 1024
    int threads = 32;
    while (threads < MAX_THREADS && threads * 8 < cols) {
        threads *= 2;
    }
    softmax_rows<<<rows, threads>>>(x, y, cols);
}
