"""nbcx-transform: blocking MPI collectives to nonblocking and persistent ones.

A source-to-source tool in the spirit of Petal (Ahmed et al., EuroMPI/USA 2017,
paper 004 in the project's shared papers) built on libclang: it parses a C
file, finds the blocking collectives, and rewrites each into its ``MPI_I*``
form with the ``MPI_Wait`` moved as late as the data dependences allow, or into
a persistent collective when it sits in a loop with loop-invariant arguments.
Only what the analysis proves safe is changed; everything else is reported.
"""

__version__ = "0.1.0"
