// alternative: an unpadded 32x32 tile with the column XOR-swizzled by the row, unrolled loops
// Element (r, c) of the tile is kept at tile[r][c ^ r]: a row is still a permutation of the
// 32 banks (the store), and a column, rows r = 0..31 at fixed c, falls in banks c ^ r, all
// different (the read-back).
#include <cuda_runtime.h>

#define TILE_DIM 32
#define ROWS_PER_PASS 8

static __global__ void transpose_swizzled(const float* __restrict__ src, float* __restrict__ dst,
                                          int n_rows, int n_cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
    const unsigned lane = threadIdx.x;
    const long long base_r = static_cast<long long>(blockIdx.y) * TILE_DIM;
    const long long base_c = static_cast<long long>(blockIdx.x) * TILE_DIM;

#pragma unroll
    for (int pass = 0; pass < TILE_DIM / ROWS_PER_PASS; ++pass) {
        const unsigned r = threadIdx.y + pass * ROWS_PER_PASS;
        if (base_r + r < n_rows && base_c + lane < n_cols) {
            tile[r][lane ^ r] = src[(base_r + r) * n_cols + base_c + lane];
        }
    }
    __syncthreads();
#pragma unroll
    for (int pass = 0; pass < TILE_DIM / ROWS_PER_PASS; ++pass) {
        const unsigned c = threadIdx.y + pass * ROWS_PER_PASS;
        if (base_c + c < n_cols && base_r + lane < n_rows) {
            dst[(base_c + c) * n_rows + base_r + lane] = tile[lane][c ^ lane];
        }
    }
}

extern "C" void solve(const float* in, float* out, int rows, int cols) {
    if (rows > 0 && cols > 0) {
        dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
        transpose_swizzled<<<grid, dim3(TILE_DIM, ROWS_PER_PASS)>>>(in, out, rows, cols);
    }
}
