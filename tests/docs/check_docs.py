#!/usr/bin/env python3
"""Checks the documentation against the tree.

    check_docs.py ROOT              links and settings
    check_docs.py ROOT --run-readme links, settings, then the README's
                                    runnable blocks (needs build/openmpi)

1. Internal links: every relative link of README.md, docs/*.md and
   docs/results/summary.md names a file or directory that exists, and
   every #anchor a heading of the target (GitHub's slugs).
2. Settings: every environment variable src/ reads (getenv,
   nbcxi_getenv, nbcxi_env_*) is in docs/settings.md's table; and
   docs/api-index.md is what tests/docs/api_index.py makes from the
   headers (every public function).
3. With --run-readme: each README block preceded by a line
   "<!-- runnable -->" runs in a scratch directory (build/, docs/ and
   tools/ linked from ROOT, HOME set to it): a ```sh block's lines are
   commands, and the ```console block right after it, if any, the output;
   in a ```console block, lines starting with "$ " are commands and the
   others output. It fails when a command fails or an output line shown
   (other than "...") does not appear in what the commands printed.
"""

import os
import re
import subprocess
import sys
import tempfile


def slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path: str) -> set[str]:
    out = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                out.add(slug(line.lstrip("#")))
    return out


def check_links(root: str) -> list[str]:
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    files += [
        os.path.join(docs, f) for f in sorted(os.listdir(docs)) if f.endswith(".md")
    ]
    files.append(os.path.join(docs, "results", "summary.md"))
    errors = []
    link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # not in code
        for target in link.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, mailto:
            name, _, anchor = target.partition("#")
            dest = (
                os.path.normpath(os.path.join(os.path.dirname(path), name))
                if name
                else path
            )
            where = os.path.relpath(path, root)
            if not os.path.exists(dest):
                errors.append(f"{where}: link to {target}: no such file")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                errors.append(f"{where}: link to {target}: no heading #{anchor}")
    return errors


def check_settings(root: str) -> list[str]:
    read = set()
    pat = re.compile(
        r'(?:getenv|nbcxi_getenv|nbcxi_env_\w+|env_seconds)\("([A-Z0-9_]+)"'
    )
    for d, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            if n.endswith((".c", ".h")):
                with open(os.path.join(d, n), encoding="utf-8") as f:
                    read |= set(pat.findall(f.read()))
    with open(os.path.join(root, "docs", "settings.md"), encoding="utf-8") as f:
        table = f.read()
    errors = [
        f"docs/settings.md: {v} is read in src/ but not documented"
        for v in sorted(read)
        if v.startswith("NBCX_") and f"`{v}`" not in table
    ]
    # One table (src/base/settings.def) declares them, and one function
    # (base/env.c) reads them: getenv("NBCX_...") elsewhere reads past it.
    with open(os.path.join(root, "src", "base", "settings.def"), encoding="utf-8") as f:
        declared = set(re.findall(r'NBCX_SETTING\("([A-Z0-9_]+)"', f.read()))
    errors += [
        f"src/base/settings.def: {v} is read in src/ but not declared"
        for v in sorted(read)
        if v.startswith("NBCX_") and v not in declared
    ]
    raw = re.compile(r'\bgetenv\("NBCX_')
    for d, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            path = os.path.join(d, n)
            if n.endswith((".c", ".h")) and not path.endswith(
                os.path.join("base", "env.c")
            ):
                with open(path, encoding="utf-8") as f:
                    if raw.search(f.read()):
                        errors.append(
                            f'{os.path.relpath(path, root)}: getenv("NBCX_..."): '
                            "read settings with nbcxi_getenv or nbcx_setting_value"
                        )
    return errors


def check_api_index(root: str) -> list[str]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import api_index

    with open(os.path.join(root, "docs", "api-index.md"), encoding="utf-8") as f:
        have = f.read()
    if have != api_index.render(root):
        return [
            "docs/api-index.md is out of date: tests/docs/api_index.py ROOT --write"
        ]
    return []


def readme_blocks(root: str) -> list[tuple[list[str], list[str]]]:
    """(commands, expected output lines) of each runnable block."""
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i, marked = [], 0, False
    while i < len(lines):
        line = lines[i]
        if line.strip() == "<!-- runnable -->":
            marked = True
        elif line.startswith("```"):
            kind = line[3:].strip()
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            if marked and kind == "sh":
                cmds, out = body, []
                if j + 1 < len(lines) and lines[j + 1].strip() == "```console":
                    k = j + 2
                    while not lines[k].startswith("```"):
                        k += 1
                    out = lines[j + 2 : k]
                    j = k
                blocks.append((cmds, out))
            elif marked and kind == "console":
                cmds = [b[2:] for b in body if b.startswith("$ ")]
                out = [b for b in body if not b.startswith("$ ")]
                blocks.append((cmds, out))
            marked = False
            i = j
        i += 1
    return blocks


def run_readme(root: str) -> list[str]:
    errors = []
    blocks = readme_blocks(root)
    if not blocks:
        return ["README.md: no block marked <!-- runnable -->"]
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("build", "docs", "tools"):
            os.symlink(os.path.join(root, d), os.path.join(tmp, d))
        env = dict(os.environ, HOME=tmp)
        for n, (cmds, want) in enumerate(blocks, 1):
            script = "set -e\n" + "\n".join(cmds) + "\n"
            print(f"check_docs: README runnable block {n}:\n  " + "\n  ".join(cmds))
            r = subprocess.run(
                ["bash", "-c", script],
                check=False,
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            got = r.stdout + r.stderr
            if r.returncode != 0:
                errors.append(f"README block {n} failed (exit {r.returncode}):\n{got}")
                continue
            have = {g.strip() for g in got.split("\n")}
            for w in want:
                if w.strip() and w.strip() != "..." and w.strip() not in have:
                    errors.append(
                        f"README block {n}: output line not seen: {w!r}\ngot:\n{got}"
                    )
    return errors


def main() -> int:
    root = os.path.abspath(sys.argv[1])
    errors = check_links(root) + check_settings(root) + check_api_index(root)
    if "--run-readme" in sys.argv[2:]:
        errors += run_readme(root)
    for e in errors:
        print("check_docs: " + e, file=sys.stderr)
    if not errors:
        print(
            "check_docs: links, settings, API index"
            + (", README blocks" if "--run-readme" in sys.argv else "")
            + ": ok"
        )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
