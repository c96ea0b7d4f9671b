"""Sphinx extension of the kernelmaps docs: docstrings read as their authors meant them.

* Plain text of a docstring is escaped where RST would misread it: a trailing underscore
  (scikit-learn's attribute names, ``n_features_in_``, read as a link target) and ``|``
  (``|x|`` read as a substitution). Literals, roles, math, literal and doctest blocks are left
  alone. This runs before numpydoc turns the sections into RST.

Every docstring problem is an error of the ``-W`` build: there is no list of excused ones
(the one kept while the docstrings were swept for numpydoc validation is gone).
"""

from __future__ import annotations

import re

_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z]\w*)_(?![\w`])")
_BAR = re.compile(r"(?<!\\)\|")


def escape_plain_text(line: str) -> str:
    """Escape in the text parts of a docstring line (outside ``literals``, `roles` and
    math) what RST would misread: a trailing underscore (``n_features_in_``, scikit-learn's
    attribute names, read as a link) and ``|`` (|x| read as a substitution)."""
    if line.lstrip().startswith(("|", "+-", "+=")):  # a table row
        return line
    parts = re.split(r"(``.*?``|`[^`]*`)", line)
    for i in range(0, len(parts), 2):
        parts[i] = _BAR.sub(r"\\|", _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i]))
    return "".join(parts)


def escape_docstring(app, what, name, obj, options, lines) -> None:
    if not name.startswith("kernelmaps"):
        return
    # Left as they are: the body of a directive or literal block (a line ending in "::",
    # e.g. ".. math::" with LaTeX) and doctest blocks (">>>" up to the next blank line).
    block_indent, in_doctest = None, False
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and (not line.strip() or indent > block_indent):
            continue
        block_indent = indent if line.rstrip().endswith("::") else None
        in_doctest = bool(line.strip()) and (in_doctest or line.lstrip().startswith(">>>"))
        if block_indent is None and not in_doctest:
            lines[i] = escape_plain_text(line)


def setup(app) -> dict:
    app.setup_extension("sphinx.ext.autodoc")  # its event, connected below
    # before numpydoc (priority 500), which turns the sections into RST
    app.connect("autodoc-process-docstring", escape_docstring, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
