"""``python -m dratwin.differential``: see :mod:`dratwin.differential.run`."""

import sys

from dratwin.differential.run import main

sys.exit(main())
