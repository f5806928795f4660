// alternative: register blocking: 64 x 64 tiles of C per block of 256 threads, 4 x 4 per thread
//
// Each step of the K loop stages a 64 x 16 tile of A (stored transposed, k-major) and a
// 16 x 64 tile of B in shared memory; every thread then keeps 4 values of A and 4 of B in
// registers per k and updates its 4 x 4 block of accumulators, so each shared load feeds 4
// FMAs instead of 1. Out-of-range elements are stored as 0.
#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr int BM = 64;  // rows of C per block
constexpr int BN = 64;  // columns of C per block
constexpr int BK = 16;  // k per step
constexpr int TM = 4;   // rows per thread
constexpr int TN = 4;   // columns per thread
constexpr int THREADS_X = BN / TN;  // 16
constexpr int THREADS_Y = BM / TM;  // 16
constexpr int THREADS = THREADS_X * THREADS_Y;

__global__ void __launch_bounds__(THREADS)
gemm_register_blocked(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_t[BK][BM];  // a_t[k][m] = A[row0 + m][k0 + k]
    __shared__ float b_s[BK][BN];  // b_s[k][n] = B[k0 + k][col0 + n]
    const int tid = threadIdx.y * THREADS_X + threadIdx.x;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK; e += THREADS) {  // 4 elements of A per thread
            const int m = e / BK;
            const int k = e % BK;
            const int r = row0 + m;
            const int kk = k0 + k;
            a_t[k][m] = (r < M && kk < K) ? A[static_cast<size_t>(r) * K + kk] : 0.0f;
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += THREADS) {  // 4 elements of B per thread
            const int k = e / BN;
            const int n = e % BN;
            const int kk = k0 + k;
            const int c = col0 + n;
            b_s[k][n] = (kk < K && c < N) ? B[static_cast<size_t>(kk) * N + c] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM];
            float b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                a[i] = a_t[k][threadIdx.y * TM + i];
            }
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                b[j] = b_s[k][threadIdx.x * TN + j];
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + threadIdx.y * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + threadIdx.x * TN + j;
            if (r < M && c < N) {
                C[static_cast<size_t>(r) * N + c] = acc[i][j];
            }
        }
    }
}

}  // namespace

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    if (M <= 0 || N <= 0) {
        return;
    }
    const dim3 block(THREADS_X, THREADS_Y);
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_register_blocked<<<grid, block>>>(A, B, C, M, N, K);
}
