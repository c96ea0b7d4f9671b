"""What the ``kernelmaps`` command shows: terminal tables and the HTML report folder.

One module per job: :mod:`~kernelmaps.cli.report.terminal` draws in the terminal (rich):
:func:`print_summary`, :func:`print_advice`, :func:`print_datasets`;
:mod:`~kernelmaps.cli.report.html_page` writes the report folder (:func:`write_report`: a
self-contained ``report.html``, ``results.csv``, ``summary.csv``);
:mod:`~kernelmaps.cli.report.plots` draws its four PNG plots (:data:`PLOTS`); and
:mod:`~kernelmaps.cli.report.cells` formats the table cells both of them show. rich and
matplotlib (the ``cli`` extra) are imported when something is drawn.
"""

from kernelmaps.cli.report.html_page import write_report
from kernelmaps.cli.report.plots import PLOTS, plot_alt_text
from kernelmaps.cli.report.terminal import (
    console,
    print_advice,
    print_datasets,
    print_summary,
    progress_bar,
)

__all__ = ["PLOTS", "console", "plot_alt_text", "print_advice", "print_datasets",
           "print_summary", "progress_bar", "write_report"]
