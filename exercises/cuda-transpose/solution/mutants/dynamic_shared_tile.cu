// mutant: the tile is extern __shared__ dynamic shared memory (blind solver)
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

__global__ void transpose_tile(const float* in, float* out, int rows, int cols) {
    extern __shared__ float tile[];  // TILE * (TILE + 1) floats, given at launch
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int r = r0 + j, c = c0 + tx;
        if (r < rows && c < cols) tile[j * (TILE + 1) + tx] = in[(size_t)r * cols + c];
    }
    __syncthreads();
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int orow = c0 + j, ocol = r0 + tx;
        if (orow < cols && ocol < rows) out[(size_t)orow * rows + ocol] = tile[tx * (TILE + 1) + j];
    }
}

}  // namespace

extern "C" void solve(const float* in, float* out, int rows, int cols) {
    const dim3 block(TILE, BLOCK_ROWS);
    const dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tile<<<grid, block, TILE * (TILE + 1) * sizeof(float)>>>(in, out, rows, cols);
}
