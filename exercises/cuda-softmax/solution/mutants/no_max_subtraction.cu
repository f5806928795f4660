// mutant: no max subtraction: sums expf(x) directly and writes expf(x) / sum, which overflows for large inputs
// Row softmax: one block per row, a block sum of expf(x), then the write.
#include <cuda_runtime.h>

namespace {

constexpr int MAX_THREADS = 1024;
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    }
    return v;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float partial[MAX_THREADS / 32];
    __shared__ float row_sum;
    const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    float s = 0.0f;
    for (int j = tid; j < cols; j += blockDim.x) {
        s += expf(in[j]);
    }
    s = warp_sum(s);
    if (lane == 0) {
        partial[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        float w = lane < warps ? partial[lane] : 0.0f;
        w = warp_sum(w);
        if (lane == 0) {
            row_sum = w;
        }
    }
    __syncthreads();
    const float total = row_sum;
    for (int j = tid; j < cols; j += blockDim.x) {
        out[j] = total > 0.0f ? expf(in[j]) / total : 0.0f;
    }
}

}  // namespace

extern "C" void solve(const float* x, float* y, int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
        return;
    }
    softmax_rows<<<rows, 256>>>(x, y, cols);
}
