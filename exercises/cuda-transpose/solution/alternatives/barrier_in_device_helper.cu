// alternative: __syncthreads() in a __device__ helper every thread calls (blind solver)
// __syncthreads() inside a __device__ helper that every thread calls unconditionally (README
// forbids such a call only inside a thread-dependent if/loop); blocks of (32, 16), 2 elements
// per thread, padded 2-D tile; bounds via unsigned compares; default stream written explicitly.
#include <cuda_runtime.h>

namespace {
constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 16;

__device__ __forceinline__ void tile_barrier() { __syncthreads(); }

__global__ void transpose_k(const float* in, float* out, unsigned rows, unsigned cols) {
    __shared__ float tile[TILE][TILE + 1];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    for (unsigned j = ty; j < TILE; j += BLOCK_ROWS)
        if (r0 + j < rows && c0 + tx < cols) tile[j][tx] = in[(size_t)(r0 + j) * cols + (c0 + tx)];
    tile_barrier();
    for (unsigned j = ty; j < TILE; j += BLOCK_ROWS)
        if (c0 + j < cols && r0 + tx < rows) out[(size_t)(c0 + j) * rows + (r0 + tx)] = tile[tx][j];
}
}  // namespace

extern "C" void solve(const float* in, float* out, int rows, int cols) {
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_k<<<grid, dim3(TILE, BLOCK_ROWS), 0, 0>>>(in, out, (unsigned)rows, (unsigned)cols);
}
