"""Pagination of the researcher API: ``?page=N&page_size=M`` (default 50, at most 500)."""
from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    """Pages of ``{"count", "next", "previous", "results"}``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
