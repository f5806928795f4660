# mutant: a hit is decided by comparing the stored value with -1, so a stored -1 is treated as a miss (not refreshed) and a value that cannot be compared with == (an array) makes get() raise

class _Node:
    __slots__ = ("key", "value", "prev", "next")
    def __init__(self, key=None, value=None):
        self.key, self.value, self.prev, self.next = key, value, None, None


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.map = {}
        self.head, self.tail = _Node(), _Node()   # head.next = most recent
        self.head.next, self.tail.prev = self.tail, self.head

    def _unlink(self, n):
        n.prev.next, n.next.prev = n.next, n.prev

    def _push_front(self, n):
        n.prev, n.next = self.head, self.head.next
        self.head.next.prev = n
        self.head.next = n

    def get(self, key):
        node = self.map.get(key)
        value = node.value if node is not None else -1
        if value == -1:
            return -1
        self._unlink(node); self._push_front(node)
        return node.value

    def put(self, key, value):
        node = self.map.get(key)
        if node is not None:
            node.value = value
            self._unlink(node); self._push_front(node)
            return
        if self.capacity == 0:
            return
        if len(self.map) >= self.capacity:
            lru = self.tail.prev
            self._unlink(lru)
            del self.map[lru.key]
        node = _Node(key, value)
        self.map[key] = node
        self._push_front(node)

    def __len__(self):
        return len(self.map)

    def __contains__(self, key):
        return key in self.map
