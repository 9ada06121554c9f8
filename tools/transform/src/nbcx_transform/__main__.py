"""``python -m nbcx_transform``."""

import sys

from nbcx_transform.cli import main

sys.exit(main())
