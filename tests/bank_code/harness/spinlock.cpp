// Harness for cpp-locks-atomics-deadlock#0: the spinlock makes an unsynchronised count exact.
int main() {
  long counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&counter] { for (int i = 0; i < 50000; ++i) { lock(); ++counter; unlock(); } });
  for (auto& t : threads) t.join();
  if (counter != 200000) { std::printf("lost updates: %ld\n", counter); return 1; }
  std::printf("ok\n");
}
