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
    return _escape_line(line, in_role=False)[0]


def _escape_line(line: str, *, in_role: bool) -> tuple[str, bool]:
    """:func:`escape_plain_text` of one line of a paragraph, given whether the line starts
    inside a role or literal opened on an earlier line (``:math:`` spanning lines); returns
    the line and whether it ends inside one."""
    if line.lstrip().startswith(("|", "+-", "+=")):  # a table row
        return line, in_role
    head = ""
    if in_role:  # the text up to the closing backtick belongs to the open role
        close = line.find("`")
        if close < 0:
            return line, True
        head, line = line[:close + 1], line[close + 1:]
        if line.startswith("`"):  # the second backtick of a ``literal``'s end
            head, line = head + "`", line[1:]
    parts = re.split(r"(``.*?``|`[^`]*`)", line)
    opened = False
    for i in range(0, len(parts), 2):
        text = parts[i]
        start = text.find("`")
        if start >= 0:  # a role or literal that the line does not close
            text, rest, opened = text[:start], text[start:], True
        else:
            rest = ""
        parts[i] = _BAR.sub(r"\\|", _TRAILING_UNDERSCORE.sub(r"\1\\_", text)) + rest
    return head + "".join(parts), opened


def escape_docstring(app, what, name, obj, options, lines) -> None:
    if not name.startswith("kernelmaps"):
        return
    # Left as they are: the body of a directive or literal block (a line ending in "::",
    # e.g. ".. math::" with LaTeX) and doctest blocks (">>>" up to the next blank line).
    block_indent, in_doctest, in_role = None, False, False
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and (not line.strip() or indent > block_indent):
            continue
        block_indent = indent if line.rstrip().endswith("::") else None
        in_doctest = bool(line.strip()) and (in_doctest or line.lstrip().startswith(">>>"))
        in_role = in_role and bool(line.strip())  # a role never spans a blank line
        if block_indent is None and not in_doctest:
            lines[i], in_role = _escape_line(line, in_role=in_role)


def setup(app) -> dict:
    app.setup_extension("sphinx.ext.autodoc")  # its event, connected below
    # before numpydoc (priority 500), which turns the sections into RST
    app.connect("autodoc-process-docstring", escape_docstring, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
