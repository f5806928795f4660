// alternative: scalar head to 16-byte alignment, float4 body, warp-first block reduction
// Alignment peeling + warp-first reduction.
// Pass 1: the first (4 - (addr/4 % 4)) % 4 floats are read as scalars so that the rest starts
// on a 16-byte boundary; the aligned middle is read as float4 with a grid-stride loop, the
// last n%4 as scalars (grid-stride too). So float4 is used for every pointer, aligned or not,
// and no load goes past in[n-1].
// Block combine: each warp reduces with shuffles first, lane 0 writes the warp's sum to a
// 32-slot shared array, one barrier, warp 0 reduces those with shuffles (Luitjens 2014).
// Pass 2: the same kernel, one block, over the static g_partials.
#include <cuda_runtime.h>
#include <cstdint>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 2048;

__device__ float g_partials[MAX_BLOCKS];

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float block_reduce(float v) {
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[wid] = v;
    __syncthreads();
    float r = 0.0f;
    if (wid == 0) {
        r = (lane < static_cast<int>(blockDim.x >> 5)) ? warp_sums[lane] : 0.0f;
        r = warp_sum(r);
    }
    return r;  // valid in thread 0
}

__global__ void sum_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const int mis = static_cast<int>((reinterpret_cast<uintptr_t>(in) >> 2) & 3);
    int head = (4 - mis) & 3;
    if (head > n) head = n;
    float acc = 0.0f;
    if (gid < head) acc += in[gid];
    const float4* in4 = reinterpret_cast<const float4*>(in + head);
    const int n4 = (n - head) >> 2;
    for (int i = gid; i < n4; i += stride) {
        const float4 q = in4[i];
        acc += (q.x + q.y) + (q.z + q.w);
    }
    for (int i = head + (n4 << 2) + gid; i < n; i += stride) acc += in[i];
    const float s = block_reduce(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

}  // namespace

extern "C" void solve(const float* in, float* out, int n) {
    static float* partials = nullptr;
    static int blocks = 0;
    if (partials == nullptr) {
        cudaGetSymbolAddress(reinterpret_cast<void**>(&partials), g_partials);
        int dev = 0, sms = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        blocks = 8 * sms;
        if (blocks < 1) blocks = 1;
        if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    }
    sum_kernel<<<blocks, THREADS>>>(in, partials, n);
    sum_kernel<<<1, THREADS>>>(partials, out, blocks);
}
