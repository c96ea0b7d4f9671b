"""Sphinx extension of the kernelmaps docs: docstrings read as their authors meant them.

* Plain text of a docstring is escaped where RST would misread it: a trailing underscore
  (scikit-learn's attribute names, ``n_features_in_``, read as a link target) and ``|``
  (``|x|`` read as a substitution). Literals, roles, math, literal and doctest blocks are left
  alone. This runs before numpydoc turns the sections into RST.
* Warnings listed in the ``kernelmaps_known_docstring_problems`` setting (``(where, what)``
  regular expressions, set in ``conf.py``) are dropped before Sphinx counts them, and the
  build says how many it met and which no longer occur, so the list only shrinks.
"""

from __future__ import annotations

import logging
import re

_FILTERS: dict[int, logging.Filter] = {}

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


class KnownProblems(logging.Filter):
    """Drops the warnings listed in ``kernelmaps_known_docstring_problems``, counting them."""

    def __init__(self, app) -> None:
        from sphinx.util.logging import WarningLogRecordTranslator

        super().__init__()
        self.app = app
        self.met: set[int] = set()
        # Sphinx turns a record's location into "file:line" text in this filter, after the
        # one that counts warnings; the same translation here (it is idempotent).
        self.translate = WarningLogRecordTranslator(app)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        self.translate.filter(record)
        where, what = str(getattr(record, "location", "") or ""), record.getMessage()
        listed = self.app.config.kernelmaps_known_docstring_problems
        for i, (location, message) in enumerate(listed):
            if re.search(location, where) and re.search(message, what):
                self.met.add(i)
                return False
        return True


def report_known_problems(app, exception) -> None:
    known, listed = _FILTERS[id(app)], app.config.kernelmaps_known_docstring_problems
    unmet = [entry for i, entry in enumerate(listed) if i not in known.met]
    logging.getLogger("sphinx").info(
        "kernelmaps docs: %d of %d known docstring problems met "
        "(kernelmaps_known_docstring_problems in docs/conf.py)%s", len(known.met), len(listed),
        "; not met (fixed? remove them): " + repr(unmet) if unmet else "")


def setup(app) -> dict:
    app.setup_extension("sphinx.ext.autodoc")  # its event, connected below
    app.add_config_value("kernelmaps_known_docstring_problems", [], "env")
    # before numpydoc (priority 500), which turns the sections into RST
    app.connect("autodoc-process-docstring", escape_docstring, priority=400)
    known = KnownProblems(app)
    for handler in logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, known)  # before Sphinx counts the warning
    _FILTERS[id(app)] = known
    app.connect("build-finished", report_known_problems)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
