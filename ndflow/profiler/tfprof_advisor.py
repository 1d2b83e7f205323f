"""tfprof's advisor (TensorFlow's core/profiler/internal/advisor), reduced: the default
checkers' AdviceProto with TensorFlow's checker names and printed layout. The
ExpensiveOperationChecker and AcceleratorUtilizationChecker read a RunMetadata's
StepStats, which ndflow does not record, so they report nothing (as TensorFlow's do without
one); the OperationChecker reports NHWC ops placed on a GPU."""

from __future__ import annotations

import sys

from ndflow.core.protos import tfprof_pb

ALL_ADVICE = {
    "ExpensiveOperationChecker": {},
    "AcceleratorUtilizationChecker": {},
    "JobChecker": {},  # only inside Google: skipped, as TensorFlow's open-source build does
    "OperationChecker": {},
}
_ORDER = ("OperationChecker", "ExpensiveOperationChecker", "AcceleratorUtilizationChecker")


def _operation_checker(stats) -> list:
    for node in stats.nodes.values():
        fmt = node.graph_op.attrs.get("data_format") if node.graph_op is not None else None
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt == "NHWC" and "gpu" in node.device.lower():
            return ["Found operation using NHWC data_format on GPU. Maybe NCHW is faster."]
    return []


def run_advisor(stats, options: dict):
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict of checker options, got "
                        f"{type(options).__name__}")
    advice = tfprof_pb.AdviceProto()
    text = []
    for name in _ORDER:
        if name not in options:
            continue
        reports = []
        if name == "OperationChecker":
            reports = _operation_checker(stats)
        elif name == "ExpensiveOperationChecker" and not stats.steps:
            sys.stderr.write("Missing RunMetadata info. Skip ExpensiveOperationChecker\n"
                             "Missing run_meta for ExpensiveOperationChecker\n")
        checker = advice.checkers[name]
        checker.reports.extend(reports)
        text.append(f"\n{name}:\n" + "".join(r + "\n" for r in reports))
    sys.stdout.write("".join(text))
    sys.stdout.flush()
    return advice
