// Harness for algo-code-memory-pool#0: sizes across every class, alignment, reuse, threads.
#define EXPECT(c) do { if (!(c)) { std::printf("failed: %s (line %d)\n", #c, __LINE__); std::exit(1); } } while (0)

int main() {
  Pool pool;
  std::vector<std::pair<unsigned char*, size_t>> live;
  for (size_t n : {0, 1, 7, 16, 17, 100, 1000, 2048, 5000, 100000}) {
    for (int rep = 0; rep < 70; ++rep) {  // more than one chunk of a class
      auto* p = static_cast<unsigned char*>(pool.allocate(n));
      EXPECT(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0);
      std::memset(p, rep, n);
      live.emplace_back(p, n);
    }
  }
  for (auto& [p, n] : live)
    for (size_t i = 0; i < n; ++i) EXPECT(p[i] == p[0]);  // no block overlaps another
  for (auto& [p, n] : live) pool.deallocate(p);
  pool.deallocate(nullptr);
  void* a = pool.allocate(24);
  pool.deallocate(a);
  EXPECT(pool.allocate(24) == a);  // the freed block is reused first
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        auto* p = static_cast<int*>(pool.allocate(sizeof(int) * (1 + (i + t) % 40)));
        *p = t;
        EXPECT(*p == t);
        pool.deallocate(p);
      }
    });
  for (auto& t : threads) t.join();
  Particle* ps = new Particle[10];
  delete[] ps;
  std::printf("ok\n");
}
