"""``python -m oracleboost``: the same command line as ``oracleboost``."""

import sys

from oracleboost.cli import main

if __name__ == "__main__":
    sys.exit(main())
