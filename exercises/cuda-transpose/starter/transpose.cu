// cuda-transpose, CUDA C++ track: out = in^T through a shared-memory tile.
//
// Grade with:  quizzer exercise cuda-transpose --check --track cuda
// Without a GPU the grader compiles this file for sm_80 and inspects the source and the PTX;
// with one it runs, checks and times it. Delete the next line when you are done.
// I AM NOT DONE
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 32;       // the tile is TILE x TILE floats
constexpr int BLOCK_ROWS = 8;  // blockDim = (TILE, BLOCK_ROWS)

__global__ void transpose_tile(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE];  // TODO: a shape without bank conflicts
    // TODO 1: load the tile in[blockIdx.y * TILE + j][blockIdx.x * TILE + threadIdx.x]
    //         (consecutive threadIdx.x -> consecutive floats; guard row < rows, col < cols)
    // TODO 2: __syncthreads(), reached by every thread of the block
    // TODO 3: write the transposed tile to out (shape [cols, rows]), rows of out at a time
    (void)tile;
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}

}  // namespace

// in: [rows, cols], out: [cols, rows], both row-major device pointers.
extern "C" void solve(const float* in, float* out, int rows, int cols) {
    const dim3 block(TILE, BLOCK_ROWS);
    const dim3 grid(1, 1);  // TODO: one block per tile of in
    transpose_tile<<<grid, block>>>(in, out, rows, cols);
}
