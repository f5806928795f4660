// Harness for the SharedPtr answers: counts, copy, move, self-assignment, threads.
#define EXPECT(c) do { if (!(c)) { std::printf("failed: %s (line %d)\n", #c, __LINE__); std::exit(1); } } while (0)

struct Tracked {
  static inline std::atomic<int> alive{0};
  int v;
  explicit Tracked(int x) : v(x) { ++alive; }
  ~Tracked() { --alive; }
};

int main() {
  {
    SharedPtr<Tracked> empty;
    EXPECT(empty.use_count() == 0);
    SharedPtr<Tracked> a(new Tracked(7));
    EXPECT(a.use_count() == 1 && a->v == 7 && (*a).v == 7);
    SharedPtr<Tracked> b = a;
    EXPECT(a.use_count() == 2);
    SharedPtr<Tracked> c = std::move(b);
    EXPECT(a.use_count() == 2 && b.use_count() == 0);
    c = c;  // self-assignment keeps the object
    EXPECT(c.use_count() == 2 && c->v == 7);
    c = SharedPtr<Tracked>(new Tracked(8));
    EXPECT(a.use_count() == 1 && c->v == 8 && Tracked::alive == 2);
    a = empty;
    EXPECT(Tracked::alive == 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([c] { for (int i = 0; i < 10000; ++i) { SharedPtr<Tracked> d = c; } });
    for (auto& t : threads) t.join();
    EXPECT(c.use_count() == 1);
  }
  EXPECT(Tracked::alive == 0);  // everything freed exactly once (ASan checks the "once")
  std::printf("ok\n");
}
