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
