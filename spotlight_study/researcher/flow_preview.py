"""One page of a study's participant flow as the researcher preview shows it: the study page's
preview (``researcher:preview_page``) and the builder's preview of a draft
(``researcher:builder_preview_page``) render it the same way, each with its own links."""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from spotlight_study.participation import steps
from spotlight_study.participation.language import study_language
from spotlight_study.studies.selectors import study_cells


def flow_preview_page(
    request: HttpRequest, study, *, cell: int, page: str, home_url: str, page_url_name: str
) -> HttpResponse:
    """Page ``page`` of cell ``cell`` of ``study``'s flow, through the step's spec
    (:func:`spotlight_study.participation.steps.preview`), in the study's language. Records
    nothing.

    Parameters
    ----------
    study : Study
        With its settings (``study_cells`` reads them).
    cell : int
        The cell's index, 0 .. cells - 1.
    page : str
        A page name of :func:`steps.preview_pages` for that cell.
    home_url : str
        Where the page's "Back to the preview list" link goes.
    page_url_name : str
        The URL name of a preview page (kwargs ``slug``, ``cell``, ``page``): the page's form
        leads to the next page of the flow through it (none on the last page).

    Raises
    ------
    Http404
        For a cell or a page the study's flow does not have.
    """
    cells = study_cells(study)
    if not 0 <= cell < len(cells):
        raise Http404("No such cell.")
    the_cell = cells[cell]
    names = [name for name, _, _ in steps.preview_pages(len(the_cell.tasks), study=study)]
    with study_language(request, study):
        shown = steps.preview(study=study, cell=the_cell, page_name=page)
        if shown is None:
            raise Http404("No such page.")
        template, ctx = shown
        index = names.index(page)
        following = names[index + 1] if index + 1 < len(names) else None
        ctx.update(
            # Not "preview": other pages (the stimulus set page) use that name for their own data.
            flow_preview=True,
            preview_home=home_url,
            form_method="get",
            form_action=reverse(page_url_name, kwargs={"slug": study.slug, "cell": cell, "page": following})
            if following
            else "",
        )
        return render(request, template, ctx)
