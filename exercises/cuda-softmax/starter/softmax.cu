// cuda-softmax, CUDA C++ track: row softmax of a float32 [rows, cols] matrix on the GPU.
//
// Grade with:  quizzer exercise cuda-softmax --check --track cuda
// Without a GPU the grader compiles this file for sm_80 and inspects the source and the PTX;
// with one it runs, checks and times it.
#include <cuda_runtime.h>

#include <math.h>

// Delete this line once solve() is written: the grader stops at it ("not implemented").
#define SOFTMAX_NOT_IMPLEMENTED 1

namespace {

constexpr int MAX_THREADS = 1024;
constexpr int WARPS = MAX_THREADS / 32;

struct State {
    float m;  // running max
    float d;  // sum of exp(x - m)
};

__global__ void softmax_rows(const float* x, float* y, int cols) {
    __shared__ State warp_state[WARPS];  // one (m, d) state per warp
    const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    // TODO 1: one pass over j = threadIdx.x, j + blockDim.x, ... < cols: running max m and
    //         running sum d of expf(x - m), d rescaled by expf(m_old - m_new) when m grows
    // TODO 2: merge the states of each warp with __shfl_xor_sync / __shfl_down_sync
    //         (offsets 16, 8, 4, 2, 1), then the warps' states through shared memory, with
    //         __syncthreads() between the stores and the loads
    // TODO 3: out[j] = expf(in[j] - M) / D; a row of only -inf gets zeros
    if (threadIdx.x == 0) {
        warp_state[0] = State{in[0], 0.0f};
        out[0] = warp_state[0].m;
    }
}

}  // namespace

// x, y: device pointers to row-major [rows, cols] float32 matrices. Write y = softmax(x) by
// rows.
extern "C" void solve(const float* x, float* y, int rows, int cols) {
    const int threads = 256;  // TODO: a block size that suits cols (32 to 1024)
    softmax_rows<<<rows, threads>>>(x, y, cols);
}
