"""A file analysed and written in every configuration of its #if groups (issue 34).

configs.py finds the configurations; here each is parsed and analysed by a
:class:`FileTransform` of its own (``Family.fts``, the configuration given
first), and the results are put together:

* a call site compiled in several configurations is converted the same way in
  all of them (:func:`unify`): kept blocking in all when one cannot convert it,
  converted in all (start-then-wait where there is nothing to gain) when one
  does, persistent only when all make it persistent the same way;
* matching across ranks (matching.py) is kept over all the configurations'
  call sites together: a group of calls that can match each other is
  converted alike in every configuration;
* the requests of a function are numbered over all its configurations' call
  sites, each its own slot (:func:`slot_tables`), and declared under the #if
  conditions of the places that use them;
* the text written is the union of what each configuration writes
  (:func:`render_family`): each configuration's waits are where its own
  analysis put them; the waits another configuration adds where this one's
  code is compiled too are harmless (waiting for a null, complete or inactive
  request returns at once; waiting for one in flight completes it earlier).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from nbcx_transform import configs
from nbcx_transform.clangast import Function, Unit, parse
from nbcx_transform.matching import Fixed
from nbcx_transform.transform import (
    PERSISTENT_PRELUDE,
    Chunk,
    ConfigInfo,
    FamilyConflictError,
    FileTransform,
    Options,
    Site,
    apply_edits,
)


@dataclass
class Family:
    """One file given: its analysis in each configuration (``fts[0]``: the one given)."""

    path: Path
    fts: list[FileTransform]
    mode: str = "single"  # see ConfigInfo.mode
    notes: list[str] = field(default_factory=list)
    hidden: list[Fixed] = field(default_factory=list)  # collectives no configuration analyses

    @property
    def ft(self) -> FileTransform:
        return self.fts[0]


_COND = {"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"}


@dataclass
class Parsed:
    """A file given, parsed in every configuration of its #if groups."""

    path: Path
    unit: Unit  # the configuration given
    alts: list[tuple[configs.Config, Unit]] = field(default_factory=list)
    space: configs.Space | None = None
    why: str = ""  # why only the configuration given is analysed ("" if not)
    conservative: bool = False  # forced (two configurations wrote different text)

    @property
    def units(self) -> list[Unit]:
        return [self.unit, *[u for _, u in self.alts]]


def prepare(
    path: Path, unit: Unit, args: list[str], max_configs: int = configs.MAX_CONFIGS
) -> Parsed:
    """Parses the other configurations of ``path`` (``unit``: the one given, parsed
    with ``args``)."""
    pr = Parsed(path, unit)
    if unit.errors:
        return pr
    sp = configs.space(unit.data, unit.skipped, max_configs)
    pr.space = sp
    pr.why = sp.limited
    if pr.why or not sp.configs:
        return pr
    given = configs.p_values(sp)
    for c in sp.configs:
        u = parse(str(path), [*args, *c.defines], contents=c.text)
        if u.errors:
            pr.why = f"in the configuration {c.describe(given)} it does not parse ({u.errors[0]})"
            pr.alts = []
            return pr
        pr.alts.append((c, u))
    return pr


def setup(pr: Parsed, opts: Options) -> Family:
    """The analyses of a file in its configurations (not yet run)."""
    unit = pr.unit
    name = pr.path.name
    sp = pr.space
    fam = Family(pr.path, [])
    if sp is None or not sp.groups:
        fam.fts = [FileTransform(unit, opts)]
        return fam
    why = pr.why or (
        "two of its configurations would be written differently" if pr.conservative else ""
    )
    if why or not pr.alts:
        mode = "conservative" if why else "single"
        fam.mode = mode
        fam.fts = [FileTransform(unit, opts, ConfigInfo(mode=mode))]
        if why:
            fam.notes.append(
                f"{name}: only the configuration given of its #if groups is analysed: {why}; "
                "their directives stop waits, and the collectives in the code it leaves out "
                "stay blocking with every call that can match them"
            )
        actives = [sp.p_active]
    else:
        fam.mode = "multi"
        dirs = configs.scan_directives(unit.data)
        split: set[int] = set()
        for u in pr.units:
            split |= configs.unaligned(u, dirs)
        kinds = {}
        for g in sp.all_groups():
            for d in g.directives:
                kinds[d.line_start] = g.kind
        passable = frozenset(
            d.line_start
            for d in dirs
            if d.kind in _COND
            and kinds.get(d.line_start) in ("enum", "language", "guard")
            and d.line_start not in split
        )
        given = configs.p_values(sp)
        info = ConfigInfo("multi", 0, "", passable, frozenset(split))
        fam.fts = [FileTransform(unit, opts, info)]
        for i, (c, u) in enumerate(pr.alts, 1):
            info = ConfigInfo("multi", i, c.describe(given), passable, frozenset(split))
            fam.fts.append(FileTransform(u, opts, info))
        fam.fts[0].others = fam.fts[1:]
        actives = [
            sp.p_active,
            *[configs.p_active_branches(sp.groups, u.skipped) for _, u in pr.alts],
        ]
    for coll, line in configs.hidden_calls(unit.data, sp, actives):
        why_h = (
            "in code that no configuration analysed compiles (its #if tests the MPI "
            "library's or the compiler's macros: only those of --mpicc are analysed)"
            if fam.mode == "multi"
            else "in code that the configuration given leaves out (not analysed)"
        )
        fam.hidden.append(Fixed(coll, f"{name}:{line}", why_h))
    return fam


# ------------------------------------------------------------------ unify
def text_sites(fam: Family) -> dict[int, list[tuple[FileTransform, Site]]]:
    """The call sites of the family by the offset of their call."""
    out: dict[int, list[tuple[FileTransform, Site]]] = {}
    for ft in fam.fts:
        for s in ft.sites:
            out.setdefault(s.call.start, []).append((ft, s))
    return out


def _cfg(ft: FileTransform) -> str:
    return ft.cfg.name or "the configuration given"


def _block(s: Site, reason: str) -> None:
    s.action = "blocking"
    s.soft = False
    s.persistent = ""
    s.loop = None
    s.batch = 0
    s.reason = reason


def unify(fam: Family) -> bool:
    """Makes each call site of a multi-configuration family one kind in all the
    configurations that compile it; whether something changed."""
    if fam.mode != "multi":
        return False
    changed = False
    for members in text_sites(fam).values():
        if len(members) < 2:
            continue
        hard = [(ft, s) for ft, s in members if s.action == "blocking" and not s.soft]
        if hard:
            hft, hs = hard[0]
            for _ft, s in members:
                if s.action != "blocking" or s.soft:
                    # (the program's own MPI_Ixxx: left nonblocking in all)
                    prefix = "left nonblocking: " if s.existing_req else ""
                    why = hs.reason[len("left nonblocking: ") :] if hs.existing_req else hs.reason
                    _block(
                        s,
                        f"{prefix}kept blocking as in the configuration {_cfg(hft)}: {why}"
                        if not s.existing_req
                        else f"{prefix}as in the configuration {_cfg(hft)}: {why}",
                    )
                    changed = True
            continue
        conv = [(ft, s) for ft, s in members if s.action != "blocking"]
        if not conv:
            continue
        cft, _cs = conv[0]
        for ft, s in members:
            if s.action == "blocking":
                ft.start_then_wait(s, f"converted as in the configuration {_cfg(cft)}")
                changed = True
        batches = {(s.batch, s.batch_index) for _ft, s in members}
        if len(batches) > 1:
            for _ft, s in members:
                _block(
                    s,
                    "its loop can start all its operations together in some configurations "
                    "of the file's #if groups and not in others",
                )
            changed = True
            continue
        kinds = {(s.action, s.persistent, s.loop.start if s.loop else -1) for _ft, s in members}
        if len(kinds) > 1 and any(s.action == "persistent" for _ft, s in members):
            for _ft, s in members:
                if s.action == "persistent" and not s.existing_req:
                    s.action = "nonblocking"
                    s.persistent = ""
                    s.loop = None
                    s.notes.append(
                        "not persistent: not persistent the same way in every configuration "
                        "of the file's #if groups"
                    )
                    changed = True
                elif s.existing_req and s.action == "persistent":
                    _block(
                        s,
                        "left nonblocking: not persistent the same way in every configuration "
                        "of the file's #if groups",
                    )
                    changed = True
    return changed


# ------------------------------------------------------------------- emit
def _converted(s: Site) -> bool:
    return s.action != "blocking" and not s.existing_req and s.wrapper is None


def slot_tables(fam: Family) -> None:
    """Numbers the requests of each function over all the configurations: each
    converted call site its own slots (a batch as many as its loop's
    iterations), the persistent ones last."""
    funcs: dict[int, dict[int, Site]] = {}
    for ft in fam.fts:
        for s in ft.sites:
            if _converted(s):
                funcs.setdefault(s.func.body.start, {}).setdefault(s.call.start, s)
    table: dict[int, int] = {}
    count: dict[int, int] = {}
    for body, sites in funcs.items():
        n = 0
        ordered = sorted(sites.items())
        for off, s in ordered:
            if not s.persistent:
                table[off] = n
                n += max(1, s.batch)
        for off, s in ordered:
            if s.persistent:
                table[off] = n
                n += 1
        count[body] = n
    for ft in fam.fts:
        ft.slot_table = table
        ft.slot_count = count


def emit_sites(fam: Family) -> None:
    """Each configuration's waits, starts and the like (not yet the declarations)."""
    if fam.ft.unit.errors:
        return
    if fam.mode == "multi":
        slot_tables(fam)
    for ft in fam.fts:
        ft.emit_sites()


_ARRAYS = ("nbcx_req", "nbcx_stat", "nbcx_flag")


def add_decls(fam: Family) -> None:
    """The request declarations of every function: in multi mode, one text for
    all the configurations, each array under the #if conditions of the places
    that use it (so that no configuration declares one it does not use)."""
    if fam.ft.unit.errors:
        return
    if fam.mode != "multi":
        ft = fam.ft
        for f in ft.main_functions():
            n = ft.counts.get(f.key, 0)
            if n > 0:
                g = ft.decl_guard(f)
                ft.add_decls(f, n, f.key in ft.waitall_funcs, f.key in ft.flags_used, (g, g, g))
        return
    ft0 = fam.ft
    names = [ft0.names[a] for a in _ARRAYS]
    uses: dict[str, list[int]] = {a: [] for a in names}
    for ft in fam.fts:
        chunks, edits = ft.resolve()
        texts: list[tuple[int, str]] = []
        for ch in chunks:
            for e in ft.chunk_edits(ch):
                # text inserted at the start of a line belongs to the line before it
                # (which may end a #if branch), except after directive lines ("next")
                at = e[0] if ch.mode == "next" or e[0] == 0 else e[0] - 1
                texts.append((at, e[3]))
        texts += [(e[0], e[3]) for e in edits]
        for off, text in texts:
            for a in names:
                if re.search(rf"\b{a}\b", text):
                    uses[a].append(off)
    bodies: dict[int, tuple[FileTransform, Function]] = {}
    for ft in fam.fts:
        for f in ft.main_functions():
            bodies.setdefault(f.body.start, (ft, f))
    for body, (ft, f) in bodies.items():
        n = ft.slot_count.get(body, 0)
        if n <= 0:
            continue
        end = f.body.end
        base = {i for i, _ in ft0.conds_at(body)}
        guards: list[str] = []
        used: list[bool] = []
        for a in names:
            offs = [o for o in uses[a] if body <= o < end]
            used.append(bool(offs))
            alts: list[str] = []
            always = False
            for o in offs:
                extra = [c for i, c in ft0.conds_at(o) if i not in base]
                if not extra:
                    always = True
                    break
                alt = " && ".join(extra)
                if alt not in alts:
                    alts.append(alt)
            if always or not alts:
                guards.append("")
            elif len(alts) == 1:
                guards.append(alts[0])
            else:
                guards.append(" || ".join(f"({x})" for x in alts))
        for x in fam.fts:
            for fg in x.main_functions():
                if fg.body.start == body:
                    x.add_decls(fg, n, used[1], used[2], (guards[0], guards[1], guards[2]))


def render_family(fam: Family) -> bytes:
    """The file as written: in multi mode, the union of what each configuration writes."""
    ft0 = fam.ft
    if ft0.unit.errors:
        return ft0.data
    if fam.mode != "multi":
        return ft0.render()
    merged: dict[tuple[object, ...], tuple[FileTransform, Chunk]] = {}
    order: list[tuple[object, ...]] = []
    edits: dict[tuple[int, int, int], list[str]] = {}
    prelude = None
    for ft in fam.fts:
        chunks, es = ft.resolve()
        for ch in chunks:
            have = merged.get(ch.key)
            if have is None:
                copy = Chunk(
                    ch.key,
                    ch.order,
                    ch.off,
                    list(ch.items),
                    ch.indent,
                    ch.mode,
                    ch.virt,
                    {k: list(v) for k, v in ch.parts.items()},
                )
                merged[ch.key] = (ft, copy)
                order.append(ch.key)
                continue
            m = have[1]
            for it in ch.items:
                if it not in m.items:
                    m.items.append(it)
            for k, v in ch.parts.items():
                dst = m.parts.setdefault(k, [])
                for it in v:
                    if it not in dst:
                        dst.append(it)
        for start, end, o, text in es:
            have_t = edits.setdefault((start, end, o), [])
            if text in have_t:
                continue
            if have_t and start != end:
                line = ft0.data.count(b"\n", 0, start) + 1
                raise FamilyConflictError(f"two configurations rewrite line {line} differently")
            have_t.append(text)
        if ft.need_ext_include and prelude is None:
            prelude = ft._include_anchor()
    out: list[tuple[int, int, int, str]] = []
    for key in order:
        ft, ch = merged[key]
        out += ft.chunk_edits(ch)
    spans = sorted((s, e) for (s, e, _o) in edits if s != e)
    for (_a, b), (c, _d) in itertools.pairwise(spans):
        if c < b:
            line = ft0.data.count(b"\n", 0, c) + 1
            raise FamilyConflictError(f"two configurations rewrite overlapping text at line {line}")
    for (start, end, o), texts in edits.items():
        for t in texts:
            out.append((start, end, o, t))
    if prelude is not None:
        out.append((prelude, prelude, 0, PERSISTENT_PRELUDE))
    return apply_edits(ft0.data, out)
