// Harness for gpu-index-overflow-and-ceil-div#1: the values the card quotes, and 64-bit sizes.
#define EXPECT(c) do { if (!(c)) { std::printf("failed: %s (line %d)\n", #c, __LINE__); std::exit(1); } } while (0)

int main() {
  EXPECT(ceil_div(0, 256) == 0 && ceil_div(1, 256) == 1 && ceil_div(256, 256) == 1);
  EXPECT(ceil_div(257, 256) == 2 && ceil_div(INT32_MAX, 256) == 8388608);
  EXPECT(ceil_div(INT64_MAX, 1) == INT64_MAX && ceil_div(INT64_MAX, 2) == INT64_MAX / 2 + 1);
  for (std::int64_t n = 0; n < 1000; ++n)
    for (std::int64_t b = 1; b < 40; ++b) EXPECT(ceil_div(n, b) == (n + b - 1) / b);
  std::printf("ok\n");
}
