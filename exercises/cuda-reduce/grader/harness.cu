// Stand-alone driver for compute-sanitizer runs of the user's solve() (CUDA track, GPU only).
// Usage: harness N  -> calls solve on N floats (exact-size allocation, so any read past the
// end is outside the allocation) and prints the result next to the exact sum.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void solve(const float* in, float* out, int n);

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 4099;
    std::vector<float> host(n > 0 ? n : 1);
    double exact = 0.0;
    for (int i = 0; i < n; ++i) {
        host[i] = static_cast<float>(i % 7) - 3.0f;
        exact += host[i];
    }
    float* in = nullptr;
    float* out = nullptr;
    cudaMalloc(&in, sizeof(float) * (n > 0 ? n : 1));
    cudaMalloc(&out, sizeof(float));
    cudaMemcpy(in, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
    solve(in, out, n);
    cudaError_t err = cudaDeviceSynchronize();
    float result = 0.0f;
    cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("n=%d result=%.1f exact=%.1f status=%s\n", n, result, exact,
                cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
