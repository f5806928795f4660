# mutant: lazy deletion in a deque of (stamp, key) records: every use appends one, and only an eviction pops the stale ones off the left. Right answers and amortised O(1), but with hits and no inserts the deque grows without bound (memory grows with the number of calls), and the next put walks all of it
from collections import deque

MISS = -1


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.data = {}        # key -> [stamp, value]
        self.log = deque()    # (stamp, key), oldest first; stale records stay until evicting
        self.clock = 0

    def _use(self, key, entry):
        entry[0] = self.clock
        self.log.append((self.clock, key))
        self.clock += 1

    def get(self, key):
        entry = self.data.get(key)
        if entry is None:
            return MISS
        self._use(key, entry)
        return entry[1]

    def put(self, key, value):
        entry = self.data.get(key)
        if entry is not None:
            entry[1] = value
            self._use(key, entry)
            return
        if self.capacity == 0:
            return
        if len(self.data) >= self.capacity:
            while True:
                stamp, k = self.log.popleft()
                e = self.data.get(k)
                if e is not None and e[0] == stamp:
                    del self.data[k]
                    break
        entry = [0, value]
        self.data[key] = entry
        self._use(key, entry)

    def __len__(self):
        return len(self.data)

    def __contains__(self, key):
        return key in self.data
