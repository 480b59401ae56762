"""``python -m memhop``: the command line (see ``memhop.cli``)."""

import sys

from memhop.cli import main

sys.exit(main())
