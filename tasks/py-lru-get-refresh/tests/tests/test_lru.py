import unittest

from cachetools_lite import LRUCache


class LRUTest(unittest.TestCase):
    def test_put_get(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        self.assertEqual(cache.get("a"), 1)

    def test_evicts_oldest(self):
        cache = LRUCache(2)
        for key in "abc":
            cache.put(key, key)
        self.assertNotIn("a", cache)
        self.assertEqual(len(cache), 2)

    def test_missing_default(self):
        self.assertEqual(LRUCache(1).get("x", 0), 0)

    def test_put_refreshes(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 3)
        cache.put("c", 4)
        self.assertIn("a", cache)
        self.assertNotIn("b", cache)


class RecencyTest(unittest.TestCase):
    def test_get_refreshes(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.get("a")
        cache.put("c", 3)
        self.assertIn("a", cache)
        self.assertNotIn("b", cache)

    def test_eviction_order_after_reads(self):
        cache = LRUCache(3)
        for key in "abc":
            cache.put(key, key)
        cache.get("a")
        cache.get("b")
        cache.put("d", "d")
        self.assertEqual(sorted(k for k in "abcd" if k in cache), ["a", "b", "d"])
