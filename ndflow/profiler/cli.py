"""`python -m ndflow.profiler [options] script.py [args]`: DLProf for ndflow.

Runs an unmodified script (as `python script.py args` would: `runpy`, `sys.argv`, the script's
directory first on `sys.path`) with every plan it executes profiled, then prints and writes
the profile: per node, op type, plan and iteration, the reduced-precision report and
recommendations. Iterations are found by `--key_node` (else proposed, and the choice printed);
the first `--iter_start` are warm-up and left out. A script that fails still gets the profile
of the iterations it finished, then the command exits with the script's failure status.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

from ndflow.core import errors
from ndflow.profiler import advice, analysis, precision, recorder, report_files, text_report

PROG = "python -m ndflow.profiler"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--key_node", default=None,
                   help="node whose executions delimit iterations (or plan:<function name>); "
                        "default: proposed from the run, as DLProf does")
    p.add_argument("--iter_start", type=int, default=0,
                   help="iterations to leave out at the start (warm-up)")
    p.add_argument("--iter_stop", type=int, default=None,
                   help="iteration at which statistics stop (exclusive)")
    p.add_argument("--output_path", default="ndflow_profile",
                   help="directory for the reports (created)")
    p.add_argument("--format", default="csv,json,tensorboard",
                   help=f"comma-separated, of {','.join(report_files.FORMATS)}")
    p.add_argument("--top", type=int, default=10, help="rows printed per table")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _fail(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 2


def _run_script(script: str, args: list) -> int:
    """Runs the script as __main__; its exit status (a raised error prints its traceback)."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        sys.stderr.write(f"{e.code}\n")
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 - the script's failure: reported, profile still written
        traceback.print_exc()
        return 1
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path


def main(argv=None) -> int:
    """The command; returns the exit status (the script's, or 2 for a usage error)."""
    p = _parser()
    a = p.parse_args(argv)
    formats = [f.strip() for f in a.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in report_files.FORMATS]
    if unknown or not formats:
        return _fail(f"unknown --format {','.join(unknown) or a.format!r}: expected a "
                     f"comma-separated list of {', '.join(report_files.FORMATS)}")
    if a.iter_start < 0:
        return _fail(f"--iter_start must be >= 0, got {a.iter_start}")
    if a.iter_stop is not None and a.iter_stop <= a.iter_start:
        return _fail(f"--iter_stop ({a.iter_stop}) must be greater than --iter_start "
                     f"({a.iter_start})")
    if not os.path.isfile(a.script):
        return _fail(f"script {a.script!r} not found")
    try:
        report_files.check_writable(a.output_path)
    except errors.OpError as e:
        return _fail(e.message)
    window = recorder.Window()
    try:
        status = _run_script(a.script, a.args)
    finally:
        cap = window.close()
    try:
        profile = analysis.analyze(cap, a.key_node, a.iter_start, a.iter_stop)
    except analysis.KeyNodeError as e:
        code = _fail(str(e))
        return status or code
    prec = precision.report(profile)
    recs = advice.recommendations(profile, prec)
    paths = report_files.write(profile, prec, recs, a.output_path, formats)
    print(text_report.render(profile, prec, recs, a.top))
    print(f"\nProfile written: {', '.join(paths)}")
    sys.stdout.flush()
    return status
