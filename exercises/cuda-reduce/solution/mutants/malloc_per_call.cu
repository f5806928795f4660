// mutant: cudaMalloc/cudaFree of the partials on every call (and a blocking cudaFree).
// Violates README "Allocate nothing per call: keep the partial sums in a static `__device__ float
// g_partials[MAX_BLOCKS]`".
#include <cuda_runtime.h>
#include <cstdint>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 2048;

__device__ float g_partials[MAX_BLOCKS];

__global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[THREADS];
    const int tid = threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    float acc = 0.0f;
    if ((reinterpret_cast<uintptr_t>(in) & 15u) == 0) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        const int n4 = n / 4;
        for (int i = blockIdx.x * blockDim.x + tid; i < n4; i += stride) {
            const float4 q = in4[i];
            acc += q.x + q.y + q.z + q.w;
        }
        for (int i = 4 * n4 + blockIdx.x * blockDim.x + tid; i < n; i += stride) acc += in[i];
    } else {
        for (int i = blockIdx.x * blockDim.x + tid; i < n; i += stride) acc += in[i];
    }
    partial[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        float v = partial[tid];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (tid == 0) out[blockIdx.x] = v;
    }
}

}  // namespace

extern "C" void solve(const float* in, float* out, int n) {
    float* partials = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&partials), MAX_BLOCKS * sizeof(float));
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    int blocks = 8 * sms;
    if (blocks < 1) blocks = 1;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    block_sum<<<blocks, THREADS>>>(in, partials, n);
    block_sum<<<1, THREADS>>>(partials, out, blocks);
    cudaFree(partials);
}
