import pytest

from pagination import Paginator, PageOutOfRange


def test_exact_pages():
    p = Paginator(range(20), per_page=10)
    assert p.page_count == 2
    assert p.page(2) == list(range(10, 20))


def test_empty_has_no_pages():
    assert Paginator([], per_page=10).page_count == 0


def test_out_of_range():
    with pytest.raises(PageOutOfRange):
        Paginator(range(5), per_page=5).page(2)
