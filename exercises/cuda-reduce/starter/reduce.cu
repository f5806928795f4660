// cuda-reduce, CUDA C++ track: sum n floats on the GPU.
//
// Grade with:  quizzer exercise cuda-reduce --check --track cuda
// Without a GPU the grader compiles this file for sm_80 and inspects the PTX; with one it
// runs, checks and times it.
#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;      // threads per block
constexpr int MAX_BLOCKS = 2048;  // size of the partial-sum buffer

__device__ float g_partials[MAX_BLOCKS];  // pass-1 output, pass-2 input

__global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[THREADS];
    const int tid = threadIdx.x;
    // TODO 1: each thread adds up in[i], in[i + gridDim.x * blockDim.x], ... while i < n
    // TODO 2: partial[tid] = that sum; reduce the block in shared memory, __syncthreads()
    //         after the store and after every step
    // TODO 3: finish the last 32 values with __shfl_down_sync(0xffffffff, v, offset)
    // TODO 4: thread 0 writes the block's sum to out[blockIdx.x]
    partial[tid] = 0.0f;
    if (tid == 0) {
        out[blockIdx.x] = partial[0];
    }
}

}  // namespace

// in, out: device pointers. Write the sum of in[0..n) to out[0] (out is not zeroed).
extern "C" void solve(const float* in, float* out, int n) {
    float* partials = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partials), g_partials);
    const int blocks = 1;  // TODO: enough blocks to fill the GPU, at most MAX_BLOCKS
    block_sum<<<blocks, THREADS>>>(in, partials, n);
    // TODO: second pass over the `blocks` partial sums, writing out[0]
    (void)out;
}
