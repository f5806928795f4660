// alternative: one warp per row (8 rows per block), shuffles only: no shared memory, no __syncthreads
// Each lane walks columns lane, lane + 32, ... of its warp's row with an online (max, sum)
// state; five xor-shuffle rounds give every lane the row's (M, D); the lanes then write.
#include <cuda_runtime.h>

#include <math.h>

namespace {

constexpr int ROWS_PER_BLOCK = 8;
constexpr unsigned ALL_LANES = 0xffffffffu;

__device__ __forceinline__ void absorb(float& m, float& d, float m2, float d2) {
    const float top = fmaxf(m, m2);
    if (top == -INFINITY) {
        return;  // both sides empty or only -inf: d stays 0
    }
    d = d * expf(m - top) + d2 * expf(m2 - top);
    m = top;
}

__global__ void warp_softmax(const float* __restrict__ x, float* __restrict__ y, int rows,
                             int cols) {
    const int lane = threadIdx.x & 31;
    const long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) {
        return;  // whole warps leave together, and no barrier follows
    }
    const float* in = x + row * cols;
    float* out = y + row * cols;

    float m = -INFINITY;
    float d = 0.0f;
    for (int j = lane; j < cols; j += 32) {
        absorb(m, d, in[j], 1.0f);
    }
#pragma unroll
    for (int delta = 16; delta >= 1; delta /= 2) {
        const float m2 = __shfl_xor_sync(ALL_LANES, m, delta);
        const float d2 = __shfl_xor_sync(ALL_LANES, d, delta);
        absorb(m, d, m2, d2);
    }
    for (int j = lane; j < cols; j += 32) {
        out[j] = d > 0.0f ? expf(in[j] - m) / d : 0.0f;
    }
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    const int blocks = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    warp_softmax<<<blocks, 32 * ROWS_PER_BLOCK>>>(x, y, rows, cols);
}
