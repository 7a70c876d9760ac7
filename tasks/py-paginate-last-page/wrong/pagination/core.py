class PageOutOfRange(IndexError):
    """Raised when a page number is outside 1..page_count."""


class Paginator:
    def __init__(self, items, per_page=20):
        if per_page < 1:
            raise ValueError("per_page must be at least 1")
        self.items = list(items)
        self.per_page = per_page

    @property
    def page_count(self):
        return len(self.items) // self.per_page + 1

    def page(self, number):
        if number < 1 or number > self.page_count:
            raise PageOutOfRange(number)
        start = (number - 1) * self.per_page
        return self.items[start:start + self.per_page]
