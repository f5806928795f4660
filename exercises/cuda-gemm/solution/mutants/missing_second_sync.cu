// mutant: no __syncthreads() after the compute loop: the next iteration overwrites tiles others still read
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 32;  // threads per block: TILE x TILE = 1024

__global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x;  // column inside the tile: neighbours read neighbouring floats
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // one element of each tile per thread; 0 outside the matrices (adds nothing)
        const int ka = k0 + tx;
        const int kb = k0 + ty;
        a_tile[ty][tx] = (row < M && ka < K) ? A[static_cast<size_t>(row) * K + ka] : 0.0f;
        b_tile[ty][tx] = (kb < K && col < N) ? B[static_cast<size_t>(kb) * N + col] : 0.0f;
        __syncthreads();  // both tiles complete before anyone reads them

#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) {
            acc += a_tile[ty][kk] * b_tile[kk][tx];
        }
    }
    if (row < M && col < N) {
        C[static_cast<size_t>(row) * N + col] = acc;
    }
}

}  // namespace

// A [M, K], B [K, N], C [M, N]: row-major device pointers. Writes C = A @ B.
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    if (M <= 0 || N <= 0) {
        return;
    }
    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);  // x: columns, y: rows
    gemm_tiled<<<grid, block>>>(A, B, C, M, N, K);
}
