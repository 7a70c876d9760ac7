import unittest

from retrying import retry


def flaky(failures, exc=IOError):
    state = {"calls": 0}

    def fn():
        state["calls"] += 1
        if state["calls"] <= failures:
            raise exc("boom")
        return state["calls"]

    return fn, state


class RetryTest(unittest.TestCase):
    def test_explicit_attempts(self):
        fn, state = flaky(2)
        self.assertEqual(retry(attempts=3)(fn)(), 3)

    def test_success_first_time(self):
        fn, state = flaky(0)
        self.assertEqual(retry(attempts=3)(fn)(), 1)

    def test_only_listed_exceptions(self):
        fn, state = flaky(1, exc=KeyError)
        with self.assertRaises(KeyError):
            retry(attempts=3, exceptions=(IOError,))(fn)()
        self.assertEqual(state["calls"], 1)


if __name__ == "__main__":
    unittest.main()
