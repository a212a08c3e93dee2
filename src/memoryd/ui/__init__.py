"""``memoryd ui``: a local page to look at memory, served by the standard library alone.

:mod:`memoryd.ui.server` owns the HTTP side (127.0.0.1, the per-run token, the Host and
CSRF checks, the static assets); :mod:`memoryd.ui.views` answers the page's JSON requests
by calling the same library functions as the CLI commands, so the page can never show
something the commands would not.
"""
