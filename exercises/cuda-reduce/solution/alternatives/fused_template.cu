// alternative: templated block size and load width, one launch, last block finishes with an atomicInc ticket
// One launch per call, templated on block size and on the load width,
// "last block finishes" (CUDA sample threadFenceReduction). Each block writes its partial to
// g_partials (used directly, no pointer passed), __threadfence(), then draws an integer ticket
// with atomicInc (which wraps back to 0 on the last block, so the counter resets itself). The
// block with the last ticket sums all B partials in a fixed order (deterministic) with the
// same block_reduce and writes out[0]. No float atomics. float4 path when `in` is 16-byte
// aligned (tail of n%4 read by block 0), scalar grid-stride loop otherwise.
#include <cuda_runtime.h>
#include <cstdint>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 2048;

__device__ float g_partials[MAX_BLOCKS];
__device__ unsigned int g_ticket = 0;

template <int T>
__device__ __forceinline__ float block_reduce(float* sm, float v) {
    const int tid = threadIdx.x;
    sm[tid] = v;
    __syncthreads();
#pragma unroll
    for (int s = T / 2; s >= 32; s >>= 1) {
        if (tid < s) sm[tid] += sm[tid + s];
        __syncthreads();
    }
    float r = 0.0f;
    if (tid < 32) {
        r = sm[tid];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) r += __shfl_down_sync(0xffffffffu, r, o);
    }
    __syncthreads();  // sm is reused by the caller
    return r;         // valid in thread 0
}

template <int T, bool VEC>
__global__ void __launch_bounds__(T) fused_sum(const float* __restrict__ in, float* out, int n) {
    __shared__ float sm[T];
    __shared__ int am_last;
    const int tid = threadIdx.x;
    float acc = 0.0f;
    if (VEC) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        const int n4 = n >> 2;
        for (int i = blockIdx.x * T + tid; i < n4; i += gridDim.x * T) {
            const float4 q = in4[i];
            acc += (q.x + q.y) + (q.z + q.w);
        }
        if (blockIdx.x == 0 && tid < (n & 3)) acc += in[(n4 << 2) + tid];
    } else {
        for (int i = blockIdx.x * T + tid; i < n; i += gridDim.x * T) acc += in[i];
    }
    acc = block_reduce<T>(sm, acc);
    if (tid == 0) {
        g_partials[blockIdx.x] = acc;
        __threadfence();
        const unsigned int t = atomicInc(&g_ticket, gridDim.x - 1);
        am_last = (t == gridDim.x - 1) ? 1 : 0;
    }
    __syncthreads();
    if (am_last) {  // uniform over the block
        float v = 0.0f;
        for (int i = tid; i < static_cast<int>(gridDim.x); i += T) v += __ldcg(&g_partials[i]);
        v = block_reduce<T>(sm, v);
        if (tid == 0) out[0] = v;
    }
}

int num_blocks() {
    static int blocks = 0;
    if (blocks == 0) {
        int dev = 0, sms = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        blocks = sms * 8;
        if (blocks < 1) blocks = 1;
        if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    }
    return blocks;
}

}  // namespace

extern "C" void solve(const float* in, float* out, int n) {
    const int blocks = num_blocks();
    if ((reinterpret_cast<uintptr_t>(in) & 15u) == 0)
        fused_sum<THREADS, true><<<blocks, THREADS>>>(in, out, n);
    else
        fused_sum<THREADS, false><<<blocks, THREADS>>>(in, out, n);
}
