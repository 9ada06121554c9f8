"""Allow ``python -m nbcx_trace``."""

import sys

from nbcx_trace.cli import main

sys.exit(main())
