# mutant: recency kept in a heapq of (stamp, key) with lazy deletion and compaction: right answers and bounded memory, but O(log n) per call
import heapq


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.data = {}     # key -> [stamp, value]
        self.heap = []     # (stamp, tiebreak, key)
        self.clock = 0

    def _use(self, key, entry):
        self.clock += 1
        entry[0] = self.clock
        heapq.heappush(self.heap, (self.clock, key))
        if len(self.heap) > 2 * len(self.data) + 16:
            self.heap = [(e[0], k) for k, e in self.data.items()]
            heapq.heapify(self.heap)

    def get(self, key):
        entry = self.data.get(key)
        if entry is None:
            return -1
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
                stamp, k = heapq.heappop(self.heap)
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
