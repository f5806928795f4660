// Harness for the Meyers singletons: one instance across threads, and no copies.
#ifndef SINGLETON
#error "SINGLETON names the class under test"
#endif
static_assert(!std::is_copy_constructible_v<SINGLETON> && !std::is_copy_assignable_v<SINGLETON>);
static_assert(!std::is_default_constructible_v<SINGLETON>);

int main() {
  std::atomic<SINGLETON*> seen[8];
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&seen, t] { seen[t] = &SINGLETON::instance(); });
  for (auto& t : threads) t.join();
  for (auto& s : seen)
    if (s.load() != seen[0].load()) { std::printf("two instances\n"); return 1; }
  std::printf("ok\n");
}
