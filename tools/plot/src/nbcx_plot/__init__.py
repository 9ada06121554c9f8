"""nbcx-plot: PNG charts from nbcx-bench JSON results.

The command line lives in :mod:`nbcx_plot.cli`, input parsing and validation
in :mod:`nbcx_plot.data`, and the charts in :mod:`nbcx_plot.charts`.
"""

__version__ = "0.1.0"
