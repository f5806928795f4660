// mutant: threads past the last column return before the barrier (an early exit at the edge)
// out = in^T for a row-major [rows, cols] float matrix, through a padded shared-memory tile.
//
// Each block moves one TILE x TILE tile with TILE x BLOCK_ROWS threads (each thread moves
// TILE / BLOCK_ROWS elements). It reads the tile row by row (consecutive threadIdx.x read
// consecutive floats of a row of in: coalesced), stores it in shared memory, waits for the
// whole block, and writes the transposed tile row by row (consecutive threadIdx.x write
// consecutive floats of a row of out: coalesced). The tile rows are TILE + 1 floats long, so
// the column a warp reads back spans all 32 banks.
#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int rows,
                               int cols) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int first_row = blockIdx.y * TILE;  // this block's tile: in[first_row:, first_col:]
    const int first_col = blockIdx.x * TILE;

    const int col = first_col + tx;
    if (col >= cols) {
        return;  // nothing to load in this column
    }
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
