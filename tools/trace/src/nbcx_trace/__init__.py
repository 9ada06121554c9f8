"""nbcx-trace: merge, summarise and draw the traces of NBCX_TRACE=DIR.

The command line and everything it does lives in :mod:`nbcx_trace.cli`
(docs/observability.md).
"""

__version__ = "0.1.0"
