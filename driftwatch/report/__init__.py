"""Self-contained HTML drift reports: a whole run, or one decision, as one offline file.

``write_report(out_dir)`` reads a replay output folder and writes ``report.html``;
``driftwatch report --input OUT_DIR [--decision WINDOW_ID] [--out FILE]`` does the same
from the command line.
"""

from driftwatch.report.build import MAX_BYTES, ReportSizeError, build_report, write_report
from driftwatch.report.inputs import RunData, load_run

__all__ = ["MAX_BYTES", "ReportSizeError", "RunData", "build_report", "load_run", "write_report"]
