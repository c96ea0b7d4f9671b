"""Optional dependencies, imported only by the functions that need them.

``import kernelmaps`` loads NumPy, SciPy and scikit-learn only; pandas, matplotlib and rich
(the ``cli`` extra) are imported on first use through :func:`import_optional`, which says
how to install what is missing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_optional"]


def import_optional(module: str, extra: str = "cli") -> ModuleType:
    """Import ``module``, or raise an ImportError naming the extra that installs it.

    Parameters
    ----------
    module : str
        A dotted module name, e.g. ``"matplotlib.ticker"``.
    extra : str, default="cli"
        The kernelmaps extra that depends on it.

    Returns
    -------
    module
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"this needs {module.split('.')[0]}, which kernelmaps does not require: "
            f"pip install 'kernelmaps[{extra}]'"
        ) from error
