"""HTML pages: the home page with a form, and the report a permalink renders (no JS, no CDN)."""
