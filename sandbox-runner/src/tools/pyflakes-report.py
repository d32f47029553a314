"""Runs inside the sandbox: `python3 -I pyflakes-report.py <out.json> <max findings> <file>...`.

Isolated mode (-I) keeps the working directory off sys.path, so a file in the workspace
named like a module (pyflakes.py) cannot replace the linter. Findings are named by the
pyflakes message class; those that mean the code fails whenever it runs are errors.
"""
import json
import sys

ERROR_MESSAGES = {
    "UndefinedName", "UndefinedExport", "UndefinedLocal", "DuplicateArgument",
    "ReturnOutsideFunction", "YieldOutsideFunction", "ContinueOutsideLoop", "BreakOutsideLoop",
    "ContinueInFinally", "DefaultExceptNotLast", "TwoStarredExpressions",
    "TooManyExpressionsInStarredAssignment", "LateFutureImport", "FutureFeatureNotDefined",
    "ImportStarNotPermitted", "ForwardAnnotationSyntaxError", "InvalidPrintSyntax",
}


class Collector:
    def __init__(self, limit):
        self.limit = limit
        self.findings = []
        self.truncated = False

    def add(self, filename, line, column, rule, message, severity):
        if len(self.findings) >= self.limit:
            self.truncated = True
            return
        self.findings.append({
            "file": filename, "line": max(int(line or 1), 1), "column": max(int(column or 1), 1),
            "rule": rule, "message": str(message), "severity": severity,
        })

    def unexpectedError(self, filename, msg):
        self.add(filename, 1, 1, "unreadable", msg, "error")

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.add(filename, lineno, offset, "syntax-error", msg, "error")

    def flake(self, message):
        rule = type(message).__name__
        severity = "error" if rule in ERROR_MESSAGES else "warning"
        self.add(message.filename, message.lineno, message.col + 1, rule, message.message % message.message_args, severity)


def main():
    out_path, limit, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    result = {"files_checked": 0, "findings": [], "truncated": False, "error": None}
    try:
        from pyflakes import api
    except ImportError as err:
        result["error"] = f"pyflakes is not installed (Debian package python3-pyflakes): {err}"
    else:
        collector = Collector(limit)
        for path in files:
            api.checkPath(path, collector)
            result["files_checked"] += 1
        result["findings"] = collector.findings
        result["truncated"] = collector.truncated
    with open(out_path, "w", encoding="utf-8") as out:
        json.dump(result, out)


main()
