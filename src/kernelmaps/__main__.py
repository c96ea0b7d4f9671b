"""``python -m kernelmaps``: the same as the ``kernelmaps`` command."""

import sys

from kernelmaps.cli import main

sys.exit(main())
