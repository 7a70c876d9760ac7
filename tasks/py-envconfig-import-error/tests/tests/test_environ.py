import unittest

from envconfig.environ import from_environ

SCHEMA = {"debug": (bool, False), "workers": (int, 4), "name": (str, "app")}


class EnvironTest(unittest.TestCase):
    def test_reads_prefixed_variables(self):
        env = {"APP_NAME": "svc", "NAME": "ignored"}
        self.assertEqual(from_environ(SCHEMA, prefix="APP_", environ=env)["name"], "svc")

    def test_booleans_and_ints(self):
        env = {"APP_DEBUG": "yes", "APP_WORKERS": "8"}
        settings = from_environ(SCHEMA, prefix="APP_", environ=env)
        self.assertIs(settings["debug"], True)
        self.assertEqual(settings["workers"], 8)

    def test_defaults_when_missing(self):
        self.assertEqual(from_environ(SCHEMA, prefix="APP_", environ={}), {"debug": False, "workers": 4, "name": "app"})
