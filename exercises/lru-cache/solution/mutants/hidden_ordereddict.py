# mutant: collections.OrderedDict taken through importlib and getattr with concatenated strings and kept inside a list attribute
import importlib

_mod = importlib.import_module("coll" + "ections")
_OD = getattr(_mod, "Ordered" + "Dict")


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self._box = [_OD()]

    def get(self, key):
        d = self._box[0]
        if key not in d:
            return -1
        d.move_to_end(key)
        return d[key]

    def put(self, key, value):
        d = self._box[0]
        if key in d:
            d[key] = value
            d.move_to_end(key)
            return
        if self.capacity == 0:
            return
        if len(d) >= self.capacity:
            d.popitem(last=False)
        d[key] = value

    def __len__(self):
        return len(self._box[0])

    def __contains__(self, key):
        return key in self._box[0]
