# mutant: a lazy-deletion log rebuilt by sorting every 8192 calls, a fixed period: O(n) amortised per call at large sizes, and a small cache keeps up to 8192 stale records
MISS = -1
_PERIOD = 8192


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.data = {}      # key -> [stamp, value]
        self.log = []       # (stamp, key)
        self.pos = 0
        self.clock = 0

    def _use(self, key, entry):
        entry[0] = self.clock
        self.log.append((self.clock, key))
        self.clock += 1
        if self.clock % _PERIOD == 0:
            self.log = sorted(((e[0], k) for k, e in self.data.items()), key=lambda t: t[0])
            self.pos = 0

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
                stamp, k = self.log[self.pos]
                self.pos += 1
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
