// alternative: tiled kernel, TILE 32, size_t indexing, zero-filled tails, two barriers per step
#include <cuda_runtime.h>
#include <cstddef>

namespace {
constexpr int TILE = 32;

__global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ka = k0 + tx;
        const int kb = k0 + ty;
        a_tile[ty][tx] = (row < M && ka < K) ? A[static_cast<size_t>(row) * K + ka] : 0.0f;
        b_tile[ty][tx] = (kb < K && col < N) ? B[static_cast<size_t>(kb) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = acc;
}
}  // namespace

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    gemm_tiled<<<grid, block>>>(A, B, C, M, N, K);
}
