#!/bin/sh
# Runs the pytest suite of tools/plot (nbcx-plot) from the source tree.
# Exit status 77 (skipped) when Python >= 3.11 with pytest and matplotlib
# is not available.
# Usage: run_plot_tests.sh [PYTHON]
python=${1:-python3}
plot=$(cd "$(dirname "$0")/../../tools/plot" && pwd) || exit 1
"$python" -c 'import sys, pytest, matplotlib; sys.exit(sys.version_info < (3, 11))' \
    2>/dev/null || { echo "SKIP: needs Python >= 3.11 with pytest and matplotlib"; exit 77; }
cd "$plot" && MPLBACKEND=Agg exec "$python" -m pytest -q -p no:cacheprovider
