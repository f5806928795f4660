// cuda-gemm, CUDA C++ track: C = A @ B with a tiled shared-memory kernel.
//
// Grade with:  quizzer exercise cuda-gemm --check --track cuda
// Without a GPU the grader compiles this file for sm_80 and inspects the PTX; with one it
// runs, checks and times it.
#include <cuda_runtime.h>

#include <cstddef>

// Delete the next line once the kernel and solve are written.
#define GEMM_NOT_IMPLEMENTED
#ifdef GEMM_NOT_IMPLEMENTED
#error "not implemented: gemm_tiled and solve (then delete the GEMM_NOT_IMPLEMENTED line)"
#endif

namespace {

constexpr int TILE = 32;  // threads per block: TILE x TILE

__global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x;  // column inside the tile
    const int ty = threadIdx.y;  // row inside the tile
    // TODO 1: row and col of this thread's element of C
    // TODO 2: for each k-tile k0 = 0, TILE, 2 * TILE, ...: a_tile[ty][tx] and b_tile[ty][tx]
    //         from A and B (0.0f outside the matrices), __syncthreads(), add row ty of
    //         a_tile times column tx of b_tile to the sum, __syncthreads()
    // TODO 3: write the sum to C[row * N + col] if the element is inside C
    (void)a_tile;
    (void)b_tile;
    (void)tx;
    (void)ty;
}

}  // namespace

// A [M, K], B [K, N], C [M, N]: row-major device pointers. Writes C = A @ B.
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    // TODO: a grid of ceil(N / TILE) x ceil(M / TILE) blocks of TILE x TILE threads
    gemm_tiled<<<1, dim3(TILE, TILE)>>>(A, B, C, M, N, K);
}
