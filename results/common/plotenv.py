"""What every results/*/plot.py needs before it draws: the right interpreter, its own folder, and
its input data. Import it first (its import does the interpreter check):

    import os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    import plotenv  # noqa: E402  (re-executes under /usr/bin/python3 when matplotlib is missing)

    csv_path = plotenv.require(__file__, "fig5.csv")          # exit 2 with one line if missing
    h5 = plotenv.require(__file__, "out/sweep.h5", "out/meshslice_search.h5")

- The interpreter: the `python3` on PATH may be a pyenv or venv interpreter without matplotlib
  (or h5py, for the scripts that read archives: meshsim_results calls `ensure("h5py")`). Then the
  script is re-executed under Debian's /usr/bin/python3; if that one lacks them too it stops with
  one line saying what to install (exit 2).
- Paths: every path is taken relative to the script's own folder, so `python3 plot.py` in the
  figure's folder and `python3 results/<item>/plot.py` from the repository root do the same.
- Missing data: `require` prints `plot.py: results/<item>/out/sweep.h5 is missing; run
  results/<item>/run.sh first` (or `results/run_all.sh <item>` for items without a run.sh) and
  exits 2, instead of a traceback from h5py or open().
- Markdown tables in READMEs: `readme_table` (and `readme_block`, for any generated Markdown)
  renders rows between two marker comments (`<!-- NAME:begin -->` … `<!-- NAME:end -->`) so a
  script can rewrite them from a CSV; `results/check_readmes.sh` reruns every `table.py` and fails
  when a README differs from what its committed CSV gives.
- Numbers and verdicts: `num`, `pct`, `ratio` format numbers one way for every README;
  `verdict(value, target, tolerance)` writes "yes (within ±3 pts)" or "no (+5.1 pts off,
  tolerance ±3 pts)", `verdict_rel` the same relative, `verdict_bound` a one-sided claim and
  `verdict_bool` a qualitative one tested in the script — the tolerance always beside it.
"""

import importlib.util
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_APT = {"matplotlib": "python3-matplotlib", "h5py": "python3-h5py"}


def _script_name():
    return os.path.basename(sys.argv[0] or "plot.py") or "plot.py"


def ensure(*modules):
    """Re-exec the running script under Debian's python3 when this interpreter lacks one of
    `modules`; exit 2 with one line when that one lacks them too."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    here_exe = os.path.realpath(sys.executable or "")
    if (os.path.exists(DEBIAN_PYTHON) and os.path.realpath(DEBIAN_PYTHON) != here_exe
            and not os.environ.get("MESHSIM_PLOT_REEXEC")):
        os.environ["MESHSIM_PLOT_REEXEC"] = "1"
        # orig_argv (3.10+) keeps `-c CODE` and `-m MODULE`, which sys.argv loses.
        args = sys.orig_argv[1:] if hasattr(sys, "orig_argv") else sys.argv
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + args)
    # The install hint names every plotting module this interpreter lacks (the results/ scripts
    # use both), not only the one this check was asked about first.
    install = missing + [m for m in _APT if m not in missing and importlib.util.find_spec(m) is None]
    sys.stderr.write(f"{_script_name()}: no python3 with {' and '.join(missing)} (tried "
                     f"{sys.executable}, {DEBIAN_PYTHON}); install them: apt install "
                     f"{' '.join(_APT.get(m, m) for m in install)}\n")
    sys.exit(2)


ensure("matplotlib")


def here(script_file, *parts):
    """Path of `parts` relative to the folder of `script_file` (pass __file__)."""
    return os.path.join(os.path.dirname(os.path.abspath(script_file)), *parts)


def rel(path):
    """`path` as written from the repository root (for messages)."""
    p = os.path.relpath(os.path.abspath(path), ROOT)
    return path if p.startswith("..") else p


def run_hint(script_file):
    """The command that generates a figure's data: its run.sh, else run_all.sh for its item."""
    folder = here(script_file)
    if os.path.exists(os.path.join(folder, "run.sh")):
        return rel(os.path.join(folder, "run.sh"))
    return f"results/run_all.sh {os.path.basename(folder)}"


def require(script_file, *paths, hint=None, note=None):
    """Absolute paths of `paths` (relative to the script's folder). When one is missing, print
    one line naming it and the command to run first (`hint`, default run_hint; `note` appended
    in parentheses), and exit 2. Returns one path or a list."""
    full = [here(script_file, p) for p in paths]
    for p in full:
        if not os.path.exists(p):
            sys.stderr.write(f"{_script_name()}: {rel(p)} is missing; run "
                             f"{hint or run_hint(script_file)} first"
                             f"{f' ({note})' if note else ''}\n")
            sys.exit(2)
    return full[0] if len(full) == 1 else full


def pyplot():
    """Headless matplotlib with reproducible SVG ids; returns pyplot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.hashsalt"] = "meshsim"
    return plt


def markdown_table(headers, rows, align=None):
    """A GitHub Markdown table; `align` is a string of 'l'/'r' per column (default: l then r)."""
    if align is None:
        align = "l" + "r" * (len(headers) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(str(h) for h in headers) + " |", "|" + "|".join(sep) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _caller_script():
    """The results/ script that called into plotenv (first frame outside this file), as written
    from the repository root, so a generated block names the same script whether it was run
    alone or through plot.py."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename) == os.path.abspath(__file__):
        f = f.f_back
    return rel(f.f_code.co_filename) if f is not None else _script_name()


def readme_block(readme, name, text):
    """Rewrite the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in `readme` with
    `text` (Markdown), after one comment naming the generating script. Exits 2 with one line when
    the markers are absent. Returns True when the file changed."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    with open(readme) as f:
        old = f.read()
    i, j = old.find(begin), old.find(end)
    if i < 0 or j < i:
        sys.stderr.write(f"{_script_name()}: {rel(readme)} has no '{begin}' … '{end}' markers\n")
        sys.exit(2)
    if not text.endswith("\n"):
        text += "\n"
    new = (old[:i + len(begin)] + "\n<!-- generated by " + _caller_script() +
           " from the committed CSV; do not edit by hand -->\n" + text + old[j:])
    if new == old:
        return False
    with open(readme, "w") as f:
        f.write(new)
    print(f"wrote {rel(readme)} ({name})")
    return True


def readme_table(readme, name, headers, rows, align=None, note=None):
    """Rewrite the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in `readme` with the
    Markdown table of `headers` and `rows` (and `note`, a line under it, e.g. the tolerance).
    Exits 2 with one line when the markers are absent. Returns True when the file changed."""
    text = markdown_table(headers, rows, align)
    if note:
        text += "\n" + note.rstrip("\n") + "\n"
    return readme_block(readme, name, text)


# ---- numbers and verdicts, one spelling for every README -------------------------------------

def num(x, digits=1, sign=False, unit=""):
    """`x` with `digits` decimals (a leading + when `sign` and x > 0, − when x < 0) and `unit`
    appended."""
    s = f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
    if s.lstrip("+-").strip("0.") == "":  # -0.0 / +0.0 → 0.0
        s = f"{0:.{digits}f}"
    return s.replace("-", "−") + unit  # the typographic minus the READMEs use


def pct(frac, digits=1, sign=False):
    """A fraction as a percentage: 0.637 → '63.7%'."""
    return num(100 * frac, digits, sign, "%")


def ratio(x, digits=2):
    """A ratio: 1.5 → '1.50×'."""
    return num(x, digits) + "×"


def verdict(value, target, tolerance, unit=" pts", digits=1):
    """Does `value` equal `target` within ±`tolerance` (absolute, in `unit`)?
    → 'yes (within ±3 pts)' or 'no (+5.1 pts off, tolerance ±3 pts)'."""
    off = value - target
    tol = f"±{tolerance:g}{unit}"
    if abs(off) <= tolerance + 1e-12:
        return f"yes (within {tol})"
    return f"no ({num(off, digits, sign=True)}{unit} off, tolerance {tol})"


def verdict_rel(value, target, tolerance, digits=0):
    """Does `value` equal `target` within a relative ±`tolerance` (0.1 = 10%)?"""
    off = value / target - 1
    tol = f"±{100 * tolerance:g}%"
    if abs(off) <= tolerance + 1e-12:
        return f"yes (within {tol} of the paper)"
    return f"no ({num(100 * off, digits, sign=True)}% off, tolerance {tol})"


def verdict_bound(value, bound, below=True, text=None, unit="", digits=1):
    """A one-sided claim: `value` < `bound` (or > when `below` is False).
    → 'yes (0.6 < 1)' / 'no (1.3 ≥ 1)'; `text` replaces the numbers' rendering."""
    ok = value < bound if below else value > bound
    op = ("<" if ok else "≥") if below else (">" if ok else "≤")
    shown = text or f"{num(value, digits)}{unit} {op} {bound:g}{unit}"
    return f"{'yes' if ok else 'no'} ({shown})"


def verdict_bool(ok, why=""):
    """A qualitative claim tested in the script: 'yes (why)' / 'no (why)'."""
    return ("yes" if ok else "no") + (f" ({why})" if why else "")


def utilization_grid(rows_by_key, model, algorithms, chips, names, no_slices):
    """Rows of a weak/strong-scaling table: one per algorithm, one cell per chip count, each
    "63.7% (32x8, S=6,3,8,8)" from the CSV row keyed (model, chips, algorithm), "N/A" where there
    is none; no S for the algorithms in `no_slices` or when the row has none."""
    out = []
    for a in algorithms:
        cells = []
        for n in chips:
            r = rows_by_key.get((model, n, a))
            if r is None:
                cells.append("N/A")
                continue
            extra = "" if a in no_slices or not r["slices"] else f", S={r['slices']}"
            cells.append(f"{pct(float(r['flop_utilization']))} ({r['mesh']}{extra})")
        out.append([names[a]] + cells)
    return out


def read_csv(path):
    """A CSV as a list of dicts (one per row)."""
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def load_module(path, name):
    """The Python file at `path` as a module called `name` (for reading another item's
    constants, e.g. a paper's numbers kept in that item's table.py, without a name clash
    between the items' own `table` modules)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_rows(path, headers, rows):
    """A committed CSV of an item's data: `headers`, then `rows`; says what it wrote."""
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(headers)
        w.writerows(rows)
    print(f"wrote {rel(path)} ({len(rows)} rows)")


def runs_main(script_file, runs, archives, write_csv, doc):
    """The command line of a script that keeps the one list of an item's meshsim runs (run.sh
    executes them through results/common/item_runs.sh's run_listed) and turns their outputs
    into a committed CSV:
        SCRIPT --list-runs   "stem|options" per run of `runs` ([(stem, options)])
        SCRIPT --csv         write_csv(), once every path of archives() exists
    Anything else prints `doc` and exits."""
    if sys.argv[1:] == ["--list-runs"]:
        for stem, opts in runs:
            print(f"{stem}|{opts}")
    elif sys.argv[1:] == ["--csv"]:
        missing = [p for p in archives() if not os.path.exists(p)]
        if missing:
            sys.exit(f"{_script_name()}: {rel(missing[0])} is missing; run "
                     f"{run_hint(script_file)} first")
        write_csv()
    else:
        sys.exit(doc)
