"""Allow ``python -m nbcx_plot``."""

import sys

from nbcx_plot.cli import main

sys.exit(main())
