"""Pagination of the researcher API: ``?page=N&page_size=M`` (default 50, at most 500).

DRF's pagination reads a ``page_size`` it cannot use (``null``, ``0``, ``abc``, ``2.5``) and an
empty ``page`` as "not given" and serves the default: requests the published schema forbids (an
integer of at least 1) were answered 200. Here such a value of either is a 400 ``invalid``
naming it, and the schema says what is accepted. A larger size than 500 is served as 500, as the
schema says; a page past the last one is DRF's 404.
"""
from rest_framework import pagination
from rest_framework.exceptions import ValidationError


class PageNumberPagination(pagination.PageNumberPagination):
    """Pages of ``{"count", "next", "previous", "results"}``; a bad ``page_size`` is a 400."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    # DRF also takes ?page=last; the schema says a page is a number, so it is refused like "abc".
    last_page_strings = ()

    def paginate_queryset(self, queryset, request, view=None):
        """DRF's page of ``queryset``, after refusing a ``page`` that is not a whole number of at
        least 1 (``ValidationError``, 400); a page past the last one is DRF's ``NotFound``."""
        raw = request.query_params.get(self.page_query_param)
        if raw is not None and not _whole_number(raw):
            raise ValidationError({self.page_query_param: ["Give a whole number of at least 1."]})
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request) -> int:
        """``page_size`` from the query (at most :attr:`max_page_size`), or the default.

        Raises ``ValidationError`` (400 ``invalid``) for a value that is not a whole number of
        at least 1.
        """
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not _whole_number(raw):
            raise ValidationError({self.page_size_query_param: ["Give a whole number of at least 1."]})
        return min(int(raw), self.max_page_size)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        """DRF's two parameters, with the bounds this class enforces."""
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {"type": "integer", "minimum": 1}
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Rows per page (default {self.page_size}); more than {self.max_page_size} "
                    f"are served as {self.max_page_size}."
                )
        return parameters


def _whole_number(raw: str) -> bool:
    """Whether ``raw`` is a whole number of at least 1 in ASCII digits (``"0"``, ``"2.5"``,
    ``"null"``, ``""`` and ``"١"`` are not)."""
    return raw.isascii() and raw.isdigit() and int(raw) >= 1
