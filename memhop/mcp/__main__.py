"""``python -m memhop.mcp PATH [--agent NAME]``."""

import sys

from memhop.mcp import main

raise SystemExit(main(sys.argv[1:]))
