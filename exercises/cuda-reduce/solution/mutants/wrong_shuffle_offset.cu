// mutant: the warp shuffle starts at offset 32 instead of 16 (a shuffle by 32 returns the lane's own value, which is added twice)
// Sum of n floats on the GPU in two passes, no atomics (same bits on every run).
//
// Pass 1: a fixed grid (8 blocks per SM, at most MAX_BLOCKS) of THREADS-thread blocks. Each
// thread adds up its elements with a grid-stride loop (16-byte float4 loads when the input
// is aligned), the block combines its threads' sums (shared-memory tree down to one warp,
// then warp shuffles) and writes one partial sum. Pass 2: one block over the partial sums.
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int THREADS = 256;     // threads per block, a power of two >= 32
constexpr int MAX_BLOCKS = 2048;  // size of the partial-sum buffer
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ float g_partials[MAX_BLOCKS];

__device__ __forceinline__ float warp_sum(float v) {
    // lane i adds lane i+16, then i+8, ... ; lane 0 ends with the warp's total
    for (int offset = 32; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(FULL_MASK, v, offset);
    }
    return v;
}

__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[THREADS];
    const int tid = threadIdx.x;
    const int first = blockIdx.x * blockDim.x + tid;
    const int stride = gridDim.x * blockDim.x;

    // 1. grid-stride loop over float4s (when aligned), then the scalar tail
    float acc = 0.0f;
    const bool aligned = (reinterpret_cast<std::uintptr_t>(in) & 15u) == 0;
    const int n4 = aligned ? n / 4 : 0;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    for (int i = first; i < n4; i += stride) {
        const float4 v = in4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    for (int i = 4 * n4 + first; i < n; i += stride) {
        acc += in[i];
    }
    partial[tid] = acc;
    __syncthreads();

    // 2. shared-memory tree down to 32 values, a barrier after every step
    for (int step = blockDim.x / 2; step >= 32; step >>= 1) {
        if (tid < step) {
            partial[tid] += partial[tid + step];
        }
        __syncthreads();
    }

    // 3. the first warp finishes with shuffles
    if (tid < 32) {
        const float v = warp_sum(partial[tid]);
        if (tid == 0) {
            out[blockIdx.x] = v;
        }
    }
}

int grid_size(int n) {
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (sms <= 0) {
            sms = 16;
        }
    }
    const int needed = (n + THREADS - 1) / THREADS;
    int blocks = needed < 8 * sms ? needed : 8 * sms;
    blocks = blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
    return blocks > 0 ? blocks : 1;
}

}  // namespace

// in, out: device pointers; writes the sum of in[0..n) to out[0].
extern "C" void solve(const float* in, float* out, int n) {
    float* partials = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partials), g_partials);
    const int blocks = grid_size(n);
    block_sum<<<blocks, THREADS>>>(in, partials, n);
    block_sum<<<1, THREADS>>>(partials, out, blocks);
}
