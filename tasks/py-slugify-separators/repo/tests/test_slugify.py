import unittest

from slugs import slugify


class SlugifyTest(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_digits_kept(self):
        self.assertEqual(slugify("Release 2 0"), "release-2-0")

    def test_custom_separator(self):
        self.assertEqual(slugify("a b", sep="_"), "a_b")
