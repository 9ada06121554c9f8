"""The ``nbcx-plot`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from nbcx_plot import __version__
from nbcx_plot.charts import METRIC_KEYS, Options, metrics_for, write_charts
from nbcx_plot.data import InputError, Run, load_run
from nbcx_plot.sim import write_sim_charts
from nbcx_plot.sittings import load_sittings, markdown, parse_pair, write_sittings_charts
from nbcx_plot.split import write_split_charts

#: Exit status for bad command lines and bad input files.
EXIT_USAGE = 2
#: Exit status when the charts cannot be written.
EXIT_OUTPUT = 1

DESCRIPTION = """\
Turn one or more nbcx-bench JSON files (nbcx-bench --json FILE) into PNG
charts comparing nbcx with the native MPI library.  For every operation it
writes four charts:

  OP-overlap.png   overlap of communication with computation vs size (%,
                   IMB-NBC definition)
  OP-time.png      time without computation vs size, log-log: nbcx and native
                   nonblocking (start, then wait at once) and the native
                   blocking collective
  OP-cpu.png       CPU used by progress vs size: CPU time of threads other
                   than the application's over the wall time (%)
  OP-overhead.png  time spent inside start + test + wait while computing

Files of nbcx-bench --transport inproc (ranks as threads, no MPI) get paper
000's variants instead: OP-overlap.png and OP-cpu.png of nbc+overlap;
OP-time.png with blocking (nbcx's blocking-style use), nbc (start, wait at
once) and nbc+overlap's communication time (inside start + test + wait);
OP-ratio.png with nbc / blocking and nbc+overlap's communication time /
blocking.  Inproc and MPI files cannot share a chart.

Lines are medians over repetitions (each the maximum over ranks); shaded
bands span min to max (by default only when a single file is plotted).
Each file is one series (one colour), labelled by what sets it apart from
the other files (MPI library, ranks, network, progress mode, ...); what
they share is printed under the title.  An operation with a single size
(ibarrier) is drawn as points with min-to-max whiskers.

The paths of the PNG files written are printed, one per line.

`nbcx-plot split DIR` draws the split-tree chart of a tools/split-sweep
directory instead (see `nbcx-plot split --help`), and `nbcx-plot sim
FILE...` the predicted times of nbcx-sim --json files (`nbcx-plot sim
--help`), and `nbcx-plot sittings DIR...` the medians over repeated
tools/bench-compare runs (`nbcx-plot sittings --help`)."""

EPILOG = """\
examples:
  nbcx-plot -o plots run.json
  nbcx-plot -o plots --prefix tcp- ompi-2.json ompi-4.json mpich-2.json
  nbcx-plot -o plots --ops ialltoall,iallreduce --metrics overlap,time *.json
  nbcx-plot split -o plots docs/results/split
  nbcx-plot sim -o plots allreduce-sim.json
  nbcx-plot sittings -o s10 --compare auto-ucx:auto-mpi s10/json/run-*

exit status: 0 on success, 2 for a bad command line or input file (one-line
message on stderr), 1 if a chart cannot be written."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message} (see --help)\n")
        sys.exit(EXIT_USAGE)


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    """The subcommands' --prefix and --dpi."""
    parser.add_argument("--prefix", default="", help="prefix for the file names (default: none)")
    parser.add_argument(
        "--dpi", type=int, default=120, help="resolution of the PNG files (default: 120)"
    )


def _check_file_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Rejects a --dpi out of range and a --prefix that names a directory."""
    if not 20 <= args.dpi <= 1200:
        parser.error(f"--dpi {args.dpi} is out of range (20 to 1200)")
    if args.prefix and ("/" in args.prefix or "\0" in args.prefix):
        parser.error("--prefix must not contain '/'")


def _write(write: Callable[[], list[Path]], outdir: Path, what: str = "charts") -> int:
    """Runs write and prints the paths it returns. Returns the exit status:
    EXIT_USAGE for bad input (InputError), EXIT_OUTPUT when a file cannot be
    written, each with a one-line message on stderr."""
    try:
        written = write()
    except InputError as e:
        sys.stderr.write(f"nbcx-plot: {e}\n")
        return EXIT_USAGE
    except OSError as e:
        where = e.filename if e.filename is not None else outdir
        sys.stderr.write(f"nbcx-plot: cannot write {what} to {where}: {e.strerror or e}\n")
        return EXIT_OUTPUT
    _print_paths(written)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nbcx-plot",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        metavar="FILE.json",
        nargs="+",
        type=Path,
        help="nbcx-bench JSON result files (schema nbcx-bench/1)",
    )
    parser.add_argument(
        "-o",
        "--outdir",
        metavar="OUTDIR",
        type=Path,
        default=Path(),
        help="directory for the PNG files, created if needed (default: the current directory)",
    )
    parser.add_argument(
        "--prefix", default="", help="prefix for the file names, e.g. 'tcp-1gbit-' (default: none)"
    )
    parser.add_argument(
        "--ops",
        metavar="OP[,OP...]",
        type=_list,
        help="only these operations (default: every operation in the files)",
    )
    parser.add_argument(
        "--metrics",
        metavar="M[,M...]",
        type=_list,
        help=f"only these charts, from {', '.join(METRIC_KEYS)} (ratio: inproc files only; "
        "overhead: MPI files only; default: all of the files' kind)",
    )
    bands = parser.add_mutually_exclusive_group()
    bands.add_argument(
        "--bands",
        dest="bands",
        action="store_const",
        const=True,
        help="always show the min-to-max range (default: only on charts of a single file)",
    )
    bands.add_argument(
        "--no-bands",
        dest="bands",
        action="store_const",
        const=False,
        help="never show the min-to-max range",
    )
    parser.add_argument(
        "--dpi", type=int, default=120, help="resolution of the PNG files (default: 120)"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s (nbcx) {__version__}")
    return parser


SPLIT_DESCRIPTION = """\
Draw, from a directory written by tools/split-sweep, one chart per
operation (OP-split.png): the split tree's measured time against its cost
model for S = 0..H tree levels run on the application.  On the x axis S;
nbcx's measured t_pure (collective alone) and t_ovrl (overlapped with a
computation as long as the blocking collective), medians over repetitions
with min-to-max bars; the model's t_collective and t_overlapped times the
unit (one point-to-point transfer of the buffer, unit.json); a vertical
line where the model picks S.  The title says ranks and cores, and
"oversubscribed" when the ranks outnumber the cores.

DIR holds OP-S<S>.json (nbcx-bench, split mode, NBCX_SPLIT_LEVELS=S),
model-OP.json (nbcx-split-model) and unit.json (nbcx-bench, 2 ranks).
The paths of the PNG files written are printed, one per line."""


def build_split_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nbcx-plot split",
        description=SPLIT_DESCRIPTION,
        epilog=EPILOG.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", metavar="DIR", type=Path, help="a tools/split-sweep output")
    parser.add_argument(
        "-o",
        "--outdir",
        metavar="OUTDIR",
        type=Path,
        help="directory for the PNG files, created if needed (default: DIR)",
    )
    parser.add_argument("--prefix", default="", help="prefix for the file names (default: none)")
    parser.add_argument(
        "--ops",
        metavar="OP[,OP...]",
        type=_list,
        help="only these operations (default: every operation in DIR)",
    )
    parser.add_argument(
        "--dpi", type=int, default=120, help="resolution of the PNG files (default: 120)"
    )
    return parser


SIM_DESCRIPTION = """\
Draw, from nbcx-sim --json files (schema nbcx-sim/1, docs/sim.md), one
chart per operation (sim-OP.png): the predicted completion time (the last
rank done) against the size when the results have several sizes, else
against the number of ranks; one line per algorithm. The paths of the PNG
files written are printed, one per line."""


def build_sim_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nbcx-plot sim",
        description=SIM_DESCRIPTION,
        epilog=EPILOG.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files", metavar="FILE", type=Path, nargs="+", help="nbcx-sim --json output"
    )
    parser.add_argument(
        "-o",
        "--outdir",
        metavar="OUTDIR",
        type=Path,
        default=Path(),
        help="directory for the PNG files, created if needed (default: .)",
    )
    _add_file_options(parser)
    return parser


def sim_main(argv: Sequence[str]) -> int:
    """``nbcx-plot sim FILE...``: the simulator's charts."""
    parser = build_sim_parser()
    args = parser.parse_args(argv)
    _check_file_options(parser, args)
    return _write(
        lambda: write_sim_charts(args.files, args.outdir, prefix=args.prefix, dpi=args.dpi),
        args.outdir,
    )


SITTINGS_DESCRIPTION = """\
Medians over sittings: DIR is one tools/bench-compare --out directory (one
sitting); give the same runs, repeated, as several DIRs. Files are named
<mpi>-<net>-np<ranks>-<column>.json (column: a mode and transport such as
auto-ucx, or a --variant's name). Writes OUTDIR/<prefix>sittings.md: per
configuration, tables of the median over sittings (range in brackets) of
overlap, nbcx's pure time over native MPI_I*'s, progress CPU and time in
calls, then, for each --compare A:B, at how many points A's median overlap
is at least B's; and one chart per configuration,
<prefix><config>-sittings-overlap.png. The paths written are printed."""


def build_sittings_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nbcx-plot sittings",
        description=SITTINGS_DESCRIPTION,
        epilog=EPILOG.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dirs", metavar="DIR", type=Path, nargs="+", help="a tools/bench-compare --out directory"
    )
    parser.add_argument(
        "-o",
        "--outdir",
        metavar="OUTDIR",
        type=Path,
        default=Path(),
        help="directory for the tables and charts, created if needed (default: .)",
    )
    parser.add_argument(
        "--compare",
        metavar="A:B",
        action="append",
        default=[],
        help="count the points where column A overlaps at least as much as B (repeatable)",
    )
    _add_file_options(parser)
    return parser


def sittings_main(argv: Sequence[str]) -> int:
    """``nbcx-plot sittings DIR...``: medians over repeated runs."""
    parser = build_sittings_parser()
    args = parser.parse_args(argv)
    _check_file_options(parser, args)
    try:
        pairs = [parse_pair(p) for p in args.compare]
        configs = load_sittings(args.dirs)
        known = {c for cfg in configs for c in cfg.columns}
        for a, b in pairs:
            for name in (a, b):
                if name not in known:
                    raise InputError(
                        f"--compare: no column {name!r} (there are: {', '.join(sorted(known))})"
                    )
    except InputError as e:
        sys.stderr.write(f"nbcx-plot: {e}\n")
        return EXIT_USAGE

    def write() -> list[Path]:
        args.outdir.mkdir(parents=True, exist_ok=True)
        md = args.outdir / f"{args.prefix}sittings.md"
        md.write_text(markdown(configs, pairs), encoding="utf-8")
        return [md, *write_sittings_charts(configs, args.outdir, args.prefix, args.dpi)]

    return _write(write, args.outdir, "the tables and charts")


def _print_paths(written: list[Path]) -> None:
    try:
        for path in written:
            print(path)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. "| head"); the charts are written anyway.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def split_main(argv: Sequence[str]) -> int:
    """``nbcx-plot split DIR``: the split-tree charts."""
    parser = build_split_parser()
    args = parser.parse_args(argv)
    _check_file_options(parser, args)
    if args.ops is not None and not args.ops:
        parser.error("--ops needs at least one operation")
    outdir = args.outdir if args.outdir is not None else args.directory
    return _write(
        lambda: write_split_charts(
            args.directory, outdir, ops=args.ops, prefix=args.prefix, dpi=args.dpi
        ),
        outdir,
    )


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "split":
        return split_main(argv[1:])
    if argv and argv[0] == "sim":
        return sim_main(argv[1:])
    if argv and argv[0] == "sittings":
        return sittings_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)

    unknown = [m for m in args.metrics or [] if m not in METRIC_KEYS]
    if unknown or args.metrics == []:
        parser.error(
            f"unknown metric '{unknown[0] if unknown else ''}' "
            f"(choose from {', '.join(METRIC_KEYS)})"
        )
    _check_file_options(parser, args)

    try:
        runs: list[Run] = [load_run(path) for path in args.files]
    except InputError as e:
        sys.stderr.write(f"nbcx-plot: {e}\n")
        return EXIT_USAGE
    try:
        applicable = [m.key for m in metrics_for(runs)]
    except ValueError as e:
        parser.error(str(e))
    for m in args.metrics or []:
        if m not in applicable:
            kind = "inproc" if runs[0].inproc else "MPI"
            parser.error(f"metric '{m}' has no chart for {kind} results")

    if args.ops is not None:
        available = {op for run in runs for op in run.ops()}
        missing = [op for op in args.ops if op not in available]
        if missing or not args.ops:
            have = ", ".join(sorted(available))
            parser.error(
                f"operation '{missing[0] if missing else ''}' is in none of the files "
                f"(they have: {have})"
            )

    return _write(
        lambda: write_charts(
            runs,
            args.outdir,
            ops=args.ops,
            metrics=args.metrics or applicable,
            prefix=args.prefix,
            opts=Options(bands=args.bands, dpi=args.dpi),
        ),
        args.outdir,
    )


if __name__ == "__main__":
    sys.exit(main())
