// Stand-alone driver for compute-sanitizer runs of the user's solve() (CUDA track, GPU only).
// Usage: harness ROWS COLS -> transposes a ROWS x COLS matrix held in exact-size allocations
// (so any access past either matrix is outside its allocation) and checks the result.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void solve(const float* in, float* out, int rows, int cols);

int main(int argc, char** argv) {
    const int rows = argc > 1 ? std::atoi(argv[1]) : 33;
    const int cols = argc > 2 ? std::atoi(argv[2]) : 65;
    const size_t n = static_cast<size_t>(rows) * cols;
    std::vector<float> host(n), back(n);
    for (size_t i = 0; i < n; ++i) {
        host[i] = static_cast<float>(i);
    }
    float* in = nullptr;
    float* out = nullptr;
    cudaMalloc(&in, sizeof(float) * n);
    cudaMalloc(&out, sizeof(float) * n);
    cudaMemcpy(in, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
    cudaMemset(out, 0xff, sizeof(float) * n);  // NaN
    solve(in, out, rows, cols);
    const cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(back.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost);
    size_t wrong = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            wrong += back[static_cast<size_t>(c) * rows + r] != host[static_cast<size_t>(r) * cols + c];
        }
    }
    std::printf("rows=%d cols=%d wrong=%zu status=%s\n", rows, cols, wrong, cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;  // wrong results are the other checks' business
}
