// mutant: __syncthreads() in a while over ty, ty declared after a comma (blind solver)
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

__global__ void transpose_tile(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    int j = ty;
    while (r0 + j < rows && j < TILE) {
        const int c = c0 + tx;
        if (c < cols) tile[j][tx] = in[(size_t)(r0 + j) * cols + c];
        j += BLOCK_ROWS;
        __syncthreads();  // wait for this pass of rows before the next one
    }
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int orow = c0 + j, ocol = r0 + tx;
        if (orow < cols && ocol < rows) out[(size_t)orow * rows + ocol] = tile[tx][j];
    }
}

}  // namespace

extern "C" void solve(const float* in, float* out, int rows, int cols) {
    const dim3 block(TILE, BLOCK_ROWS);
    const dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tile<<<grid, block>>>(in, out, rows, cols);
}
