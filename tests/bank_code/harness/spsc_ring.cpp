// Harness for algo-code-ring-buffer-spsc#0: full and empty edges, then two threads.
#define EXPECT(c) do { if (!(c)) { std::printf("failed: %s (line %d)\n", #c, __LINE__); std::exit(1); } } while (0)

int main() {
  SpscRing<int, 4> ring;
  int out = -1;
  EXPECT(!ring.pop(out));
  for (int i = 0; i < 4; ++i) EXPECT(ring.push(i));
  EXPECT(!ring.push(99));  // full at exactly N
  for (int i = 0; i < 4; ++i) { EXPECT(ring.pop(out)); EXPECT(out == i); }
  EXPECT(!ring.pop(out));
  static SpscRing<long, 64> shared;
  constexpr long kItems = 200000;
  std::thread producer([] { for (long i = 0; i < kItems;) if (shared.push(i)) ++i; });
  long expected = 0, got = 0;
  while (expected < kItems)
    if (shared.pop(got)) { EXPECT(got == expected); ++expected; }  // FIFO, nothing lost
  producer.join();
  std::printf("ok\n");
}
