// mutant: the naive kernel: every thread reads its row of A and column of B from global memory
#include <cuda_runtime.h>

namespace {

__global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
        }
        C[static_cast<size_t>(row) * N + col] = acc;
    }
}

}  // namespace

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(16, 16);
    const dim3 grid((N + 15) / 16, (M + 15) / 16);
    gemm_naive<<<grid, block>>>(A, B, C, M, N, K);
}
