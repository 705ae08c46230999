"""Report: the Markdown capacity report and the grouped diff of out/, for pull requests."""

from compiler.report.diff import render_diff
from compiler.report.markdown import Previous, build_report
from compiler.report.mig import MigChange, mig_changes
from compiler.report.previous import plan_from_json, read_previous_plans, read_previous_steering

__all__ = [
    "MigChange",
    "Previous",
    "build_report",
    "mig_changes",
    "plan_from_json",
    "read_previous_plans",
    "read_previous_steering",
    "render_diff",
]
