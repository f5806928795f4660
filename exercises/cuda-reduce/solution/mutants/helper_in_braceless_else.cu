// mutant: the block reduction helper is called in an else without braces (blind solver)
// Two passes, same kernel; float4 loads with a scalar head up to the 16-byte boundary.
#include <cuda_runtime.h>
#include <cstdint>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 2048;

__device__ float g_partials[MAX_BLOCKS];

__device__ __forceinline__ float block_reduce(float v, float* sh) {
    const int tid = threadIdx.x;
    sh[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (tid < s) sh[tid] += sh[tid + s];
        __syncthreads();
    }
    float r = 0.0f;
    if (tid < 32) {
        r = sh[tid];
        r += __shfl_down_sync(0xffffffffu, r, 16);
        r += __shfl_down_sync(0xffffffffu, r, 8);
        r += __shfl_down_sync(0xffffffffu, r, 4);
        r += __shfl_down_sync(0xffffffffu, r, 2);
        r += __shfl_down_sync(0xffffffffu, r, 1);
    }
    return r;
}

__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[THREADS];
    const int tid = threadIdx.x;
    const int gtid = blockIdx.x * blockDim.x + tid;
    const int stride = gridDim.x * blockDim.x;
    float acc = 0.0f;
    // scalar head up to the next 16-byte boundary
    int head = (int)(((16u - ((uintptr_t)in & 15u)) & 15u) / 4u);
    if ((uintptr_t)in & 3u) head = n;  // not even float-aligned: all scalar
    if (head > n) head = n;
    if (gtid < head) acc += in[gtid];
    const float4* in4 = reinterpret_cast<const float4*>(in + head);
    const int n4 = (n - head) / 4;
    for (int i = gtid; i < n4; i += stride) {
        float4 q = in4[i];
        acc += (q.x + q.y) + (q.z + q.w);
    }
    for (int i = head + n4 * 4 + gtid; i < n; i += stride) acc += in[i];
    float r;
    if (gtid >= n && n > 0) r = 0.0f;
    else r = block_reduce(acc, partial);
    if (tid == 0) out[blockIdx.x] = r;
}

int blocks_for_device() {
    static int cached = 0;
    if (cached == 0) {
        int dev = 0, sms = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        int b = 8 * sms;
        if (b < 1) b = 1;
        if (b > MAX_BLOCKS) b = MAX_BLOCKS;
        cached = b;
    }
    return cached;
}

}  // namespace

extern "C" void solve(const float* in, float* out, int n) {
    float* partials = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partials), g_partials);
    const int blocks = blocks_for_device();
    block_sum<<<blocks, THREADS>>>(in, partials, n);
    block_sum<<<1, THREADS>>>(partials, out, blocks);
}
