"""The home page: the estimate form, empty; submitting it opens the estimate's permalink."""

from __future__ import annotations

from functools import cache

from service.web.form import FormState, render_form_page


@cache
def render_home() -> str:
    return render_form_page(FormState())
