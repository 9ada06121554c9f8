#!/usr/bin/env python3
"""extract_blocking.py KERNEL.c OUT.c: the blocking source of a kernel.

The kernels of apps/ call every collective through app.h's variant
wrappers (app_allreduce(&site, ...) then app_wait(&site)). nbcx-transform
works on plain MPI code, so this writes the kernel's blocking code path
as a user would have written it: a copy of its run() function,
run_transformed(), in which

  app_<coll>(&site, args..., &comm);  becomes  MPI_<Coll>(args..., comm.m);
  app_wait(...); app_waitall(...);    are removed ((void)0 where a
                                       statement must stay), and so are
  app_site_free(), app_comm_free() and NB(nbcx ...) (nbcx objects)
  app_comm_make(comm, &c);            becomes  c.m = comm;
  MP(call) / APP_DIE(...)             become   call / app_die(...)
  macros defined inside run()         are expanded at their uses

(the site declarations stay, unused). The rest of the file is kept, so the program still has its
blocking variant to check the transformed one against (--check). The
file ends with run_transformed() after including transformed_timing.h,
which (when compiled, not when parsed by nbcx-transform: -D
APP_TRANSFORM_PARSE) times every MPI communication call the tool leaves
or writes there, as the wrappers time the other variants.

The output is meant for nbcx-transform, whose result is compiled as
app_<kernel>_transformed and run under libnbcx-pmpi.
"""

import re
import sys
from collections.abc import Callable

TYPES = {
    "APP_DOUBLE": "MPI_DOUBLE",
    "APP_INT": "MPI_INT",
    "APP_INT64": "MPI_INT64_T",
    "APP_BYTE": "MPI_BYTE",
}
OPS = {"APP_SUM": "MPI_SUM"}


def split_args(s: str) -> list[str]:
    """Top-level comma split of a call's argument text."""
    out: list[str] = []
    depth, cur = 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def call_end(text: str, open_paren: int) -> int:
    """Index just past the parenthesis matching text[open_paren]."""
    depth = 0
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced call")


def dt(a: str) -> str:
    return TYPES.get(a, f"({a}).m")


def op(a: str) -> str:
    return OPS.get(a, f"({a}).m")


def comm(a: str) -> str:
    m = re.fullmatch(r"&\s*(\w+)", a)
    return f"{m.group(1)}.m" if m else f"({a})->m"


def mpi_call(name: str, a: list[str]) -> str:
    """The blocking MPI call of one app_<name>(site, ...) wrapper call."""
    a = a[1:]  # the site
    if name == "allreduce":
        sb, rb, n, t, o, c = a
        return f"MPI_Allreduce({sb}, {rb}, {n}, {dt(t)}, {op(o)}, {comm(c)})"
    if name == "bcast":
        b, n, t, root, c = a
        return f"MPI_Bcast({b}, {n}, {dt(t)}, {root}, {comm(c)})"
    if name == "allgatherv":
        sb, sn, rb, rn, rd, t, c = a
        return (
            f"MPI_Allgatherv({sb}, {sn}, {dt(t)}, {rb}, {rn}, {rd}, {dt(t)}, {comm(c)})"
        )
    if name == "alltoall":
        sb, rb, n, t, c = a
        return f"MPI_Alltoall({sb}, {n}, {dt(t)}, {rb}, {n}, {dt(t)}, {comm(c)})"
    if name == "gather":
        sb, rb, n, t, root, c = a
        return f"MPI_Gather({sb}, {n}, {dt(t)}, {rb}, {n}, {dt(t)}, {root}, {comm(c)})"
    if name == "gatherv":
        sb, sn, rb, rn, rd, t, root, c = a
        return (
            f"MPI_Gatherv({sb}, {sn}, {dt(t)}, {rb}, {rn}, {rd}, {dt(t)}, "
            f"{root}, {comm(c)})"
        )
    if name == "neighbor_alltoall":
        sb, rb, n, t, c = a
        return (
            f"MPI_Neighbor_alltoall({sb}, {n}, {dt(t)}, {rb}, {n}, {dt(t)}, {comm(c)})"
        )
    if name == "neighbor_alltoallv":
        sb, sn, sd, rb, rn, rd, t, c = a
        return (
            f"MPI_Neighbor_alltoallv({sb}, {sn}, {sd}, {dt(t)}, {rb}, {rn}, "
            f"{rd}, {dt(t)}, {comm(c)})"
        )
    if name == "neighbor_alltoallw":
        sb, sn, sd, stm, _stn, rb, rn, rd, rtm, _rtn, c = a
        return (
            f"MPI_Neighbor_alltoallw({sb}, {sn}, (const MPI_Aint *){sd}, {stm}, "
            f"{rb}, {rn}, (const MPI_Aint *){rd}, {rtm}, {comm(c)})"
        )
    raise ValueError(f"app_{name}: no blocking form known")


WRAPPERS = (
    "neighbor_alltoallw|neighbor_alltoallv|neighbor_alltoall|allreduce|bcast|"
    "allgatherv|alltoall|gatherv|gather"
)


def remove_statement(out: str, body: str, end: int) -> tuple[str, int]:
    """(out, end) with the statement just begun at the end of out (the
    call body[..end] then ';') removed: its line goes, and a braceless
    if / for header right above it with it; elsewhere (void)0 stays."""
    line_start = out.rfind("\n") + 1
    if out[line_start:].strip() == "" and body[end : end + 2] == ";\n":
        prev_start = out.rfind("\n", 0, line_start - 1) + 1
        prev = out[prev_start:line_start].strip()
        if not prev.endswith(")"):
            return out[:line_start], end + 2
        if re.match(r"(if|for) \(", prev) and prev.count("(") == prev.count(")"):
            return out[:prev_start], end + 2
    return out + "(void)0", end


CALL = re.compile(
    r"\b(?:app_(" + WRAPPERS + r"|wait|waitall|site_free|comm_make|comm_free)"
    r"|(MP|NB|APP_DIE))\s*\("
)


def rewrite_calls(body: str) -> str:
    out, pos = "", 0
    while True:
        m = CALL.search(body, pos)
        if not m:
            return out + body[pos:]
        end = call_end(body, m.end() - 1)
        out += body[pos : m.start()]
        name = m.group(1) or m.group(2)
        inner = body[m.end() : end - 1]
        if name in ("wait", "waitall", "site_free", "comm_free", "NB"):
            # Requests of the wrappers, nbcx objects: not in plain MPI.
            out, end = remove_statement(out, body, end)
        elif name == "comm_make":
            comm_arg, var = split_args(inner)
            out += f"{var.lstrip('&').strip()}.m = {comm_arg}"
        elif name == "MP":  # errors are fatal in MPI by default
            out += inner
        elif name == "APP_DIE":
            out += f"app_die({inner})"
        else:
            out += mpi_call(name, split_args(inner))
        pos = end


def literally(text: str) -> Callable[[re.Match[str]], str]:
    """A re.sub replacement that inserts text as it is (no escapes)."""
    return lambda _m: text


def expand_local_macros(body: str) -> str:
    """Expands the function-like macros defined in body at their uses."""
    defs = list(
        re.finditer(
            r"^#define (\w+)\(([\w, ]*)\)((?:[^\n]*\\\n)*[^\n]*)\n", body, re.MULTILINE
        )
    )
    for d in defs:
        name = d.group(1)
        params = [x.strip() for x in d.group(2).split(",") if x.strip()]
        text = re.sub(r"[ \t]*\\\n", "\n", d.group(3)).strip()
        body = body.replace(d.group(0), "")
        body = re.sub(r"^#undef " + name + r"\s*\n", "", body, flags=re.MULTILINE)
        use = re.compile(r"\b" + name + r"\(")
        while True:
            u = use.search(body)
            if not u:
                break
            end = call_end(body, u.end() - 1)
            args = split_args(body[u.end() : end - 1]) if params else []
            t = text
            for prm, arg in zip(params, args):
                t = re.sub(r"\b" + prm + r"\b", literally(f"({arg})"), t)
            body = body[: u.start()] + t + body[end:]
    return body


def main() -> None:
    src_path, out_path = sys.argv[1], sys.argv[2]
    with open(src_path) as f:
        src = f.read()
    m = re.search(r"^static void run\(struct app_result \*res\)\n\{", src, re.MULTILINE)
    if not m:
        sys.exit(f"{src_path}: no 'static void run(struct app_result *res)'")
    depth, i = 0, m.end() - 1
    while True:
        if src[i] == "{":
            depth += 1
        elif src[i] == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    run = src[m.start() : i + 1]
    copy = run.replace("static void run(", "static void run_transformed(", 1)
    copy = rewrite_calls(expand_local_macros(copy))
    head = (
        f"/* Generated from {src_path} by apps/transformed/extract_blocking.py:\n"
        " * the kernel with its blocking code path as plain MPI in\n"
        " * run_transformed() (--variant transformed). Do not edit. */\n"
        "#define APP_RUN_TRANSFORMED run_transformed\n"
    )
    body = src.replace('#include "../common/app.h"', '#include "app.h"')
    # nbcx-transform sees only the blocking code path: the wrapper-based
    # run() (the other variants, and the blocking reference of --check)
    # is hidden from it.
    body = body.replace(
        run,
        "#ifndef APP_TRANSFORM_PARSE\n"
        + run
        + "\n#else\nstatic void run(struct app_result *res);\n#endif",
        1,
    )
    body = re.sub(
        r"^int main\(",
        "static void run_transformed(struct app_result *res);\n\nint main(",
        body,
        count=1,
        flags=re.MULTILINE,
    )
    tail = (
        "\n/* ---- the blocking code path, as plain MPI ---- */\n"
        '#include "transformed_timing.h"\n\n' + copy + "\n"
    )
    with open(out_path, "w") as f:
        f.write(head + body + tail)


if __name__ == "__main__":
    main()
