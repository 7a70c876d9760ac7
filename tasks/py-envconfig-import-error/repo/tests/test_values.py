import unittest

from envconfig.values import to_bool, to_int


class ValuesTest(unittest.TestCase):
    def test_to_bool(self):
        self.assertTrue(to_bool("Yes"))
        self.assertFalse(to_bool(" off "))

    def test_to_bool_rejects(self):
        with self.assertRaises(ValueError):
            to_bool("maybe")

    def test_to_int(self):
        self.assertEqual(to_int(" 42"), 42)
