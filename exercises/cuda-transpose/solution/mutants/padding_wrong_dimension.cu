// mutant: the tile padded on the first dimension, [TILE + 1][TILE]: its rows are still 32 floats
#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int rows,
                               int cols) {
    __shared__ float tile[TILE + 1][TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int first_row = blockIdx.y * TILE;  // this block's tile: in[first_row:, first_col:]
    const int first_col = blockIdx.x * TILE;

    const int col = first_col + tx;
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int row = first_row + j;
        if (row < rows && col < cols) {
            tile[j][tx] = in[static_cast<size_t>(row) * cols + col];
        }
    }
    __syncthreads();

    // the tile lands at out[first_col:, first_row:]; thread tx writes column tx of it
    const int out_col = first_row + tx;
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int out_row = first_col + j;
        if (out_row < cols && out_col < rows) {
            out[static_cast<size_t>(out_row) * rows + out_col] = tile[tx][j];
        }
    }
}

}  // namespace

// in: [rows, cols], out: [cols, rows], both row-major device pointers.
extern "C" void solve(const float* in, float* out, int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    const dim3 block(TILE, BLOCK_ROWS);
    const dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tile<<<grid, block>>>(in, out, rows, cols);
}
