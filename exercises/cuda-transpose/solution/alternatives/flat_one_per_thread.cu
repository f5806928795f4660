// alternative: 32x32 threads, one element each, a flat padded 1-D tile of 32 * 33 floats
// Element (r, c) of the tile is at r * 33 + c: a column has a stride of 33 words, so its 32
// elements sit in 32 different banks.
#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr int T = 32;
constexpr int PITCH = T + 1;

__global__ void transpose_flat(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[T * PITCH];
    int x = blockIdx.x * T + threadIdx.x;  // column of in
    int y = blockIdx.y * T + threadIdx.y;  // row of in
    if (x < cols && y < rows) {
        tile[threadIdx.y * PITCH + threadIdx.x] = in[static_cast<size_t>(y) * cols + x];
    }
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x;  // column of out (a row of in)
    y = blockIdx.x * T + threadIdx.y;  // row of out (a column of in)
    if (x < rows && y < cols) {
        out[static_cast<size_t>(y) * rows + x] = tile[threadIdx.x * PITCH + threadIdx.y];
    }
}

}  // namespace

extern "C" void solve(const float* in, float* out, int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    const dim3 threads(T, T);
    const dim3 blocks((cols + T - 1) / T, (rows + T - 1) / T);
    transpose_flat<<<blocks, threads>>>(in, out, rows, cols);
}
