"""``python -m harness``: the same as the ``harness`` console script."""

import sys

from harness.cli import main

sys.exit(main())
