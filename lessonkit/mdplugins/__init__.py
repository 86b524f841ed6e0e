"""markdown-it-py plugins: each is ``plugin(md, **options)`` and registers rules.

They share one convention: the render ``env`` carries the page's context
(``env["ctx"]``, a ``PageContext``) and collects what the page uses.
"""

# Where the verification summary goes; the blocks plugin writes it, the page renderer fills it.
SUMMARY_SLOT = "<!--lessonkit:verification-summary-->"
