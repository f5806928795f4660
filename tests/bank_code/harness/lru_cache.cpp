// Harness for cpp-lru-cache-approach#0: random operations against a simple model.
#define EXPECT(c) do { if (!(c)) { std::printf("failed: %s (line %d)\n", #c, __LINE__); std::exit(1); } } while (0)

int main() {
  std::mt19937 rng(7);
  for (size_t cap : {0, 1, 2, 3}) {
    LRUCache cache(cap);
    std::vector<std::pair<int, int>> model;  // most recent first
    for (int step = 0; step < 3000; ++step) {
      int key = static_cast<int>(rng() % 5);
      auto it = std::find_if(model.begin(), model.end(), [&](auto& kv) { return kv.first == key; });
      if (rng() % 2) {
        std::optional<int> want;
        if (it != model.end()) { want = it->second; auto kv = *it; model.erase(it); model.insert(model.begin(), kv); }
        EXPECT(cache.get(key) == want);
      } else {
        int value = static_cast<int>(rng() % 100);
        cache.put(key, value);
        if (cap == 0) continue;
        if (it != model.end()) model.erase(it);
        model.insert(model.begin(), {key, value});
        if (model.size() > cap) model.pop_back();
      }
    }
  }
  std::printf("ok\n");
}
