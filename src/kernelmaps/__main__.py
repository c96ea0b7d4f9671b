"""``python -m kernelmaps``: the same as the ``kernelmaps`` command."""

import sys

from kernelmaps.cli import main

if __name__ == "__main__":
    sys.exit(main())
