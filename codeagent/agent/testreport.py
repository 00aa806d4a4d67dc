"""Running a repository's tests with machine-readable output: one outcome per test id.

pytest writes JUnit XML (``--junitxml``), node's test runner writes JUnit through
``--test-reporter=junit``, ``go test -json`` writes one JSON event per line. Outcomes come from
those reports, never from regexes over the console text; the console text is kept for the model.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from codeagent.protocols import Sandbox
from codeagent.tools.testrun import detect

REPORT = ".codeagent-report.xml"
"""Report file written in the workspace root during a run and removed right after."""

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


@dataclass
class TestReport:
    """One test run: the command, each test id's outcome, and the console output."""

    command: str
    exit_code: int
    outcomes: dict[str, str] = field(default_factory=dict)
    output: str = ""
    timed_out: bool = False
    duration_s: float = 0.0
    details: dict[str, str] = field(default_factory=dict)
    """Per failed or errored test id: the runner's failure message and traceback (JUnit runners)."""

    @property
    def failing(self) -> set[str]:
        """Test ids that failed or errored."""
        return {t for t, o in self.outcomes.items() if o in (FAILED, ERROR)}

    @property
    def passing(self) -> set[str]:
        """Test ids that passed."""
        return {t for t, o in self.outcomes.items() if o == PASSED}

    @property
    def ok(self) -> bool:
        """The run completed with every test passing (and at least one test, or a zero exit code)."""
        return not self.timed_out and self.exit_code == 0 and not self.failing

    def summary(self) -> str:
        """``3 passed, 1 failed`` style counts."""
        counts: dict[str, int] = {}
        for o in self.outcomes.values():
            counts[o] = counts.get(o, 0) + 1
        text = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests found"
        return text + (" (timed out)" if self.timed_out else "")


def command_for(root: Path, configured: str | None = None) -> tuple[str, str] | None:
    """``(runner, command)`` that writes a machine-readable report; None when no test set-up is found.

    A configured command is used as given; when it runs pytest or ``node --test`` the report options are added.
    """
    if configured:
        return _kind(configured), configured
    found = detect(root)
    if found is None:
        return None
    runner, command = found
    if runner == "npm":
        script = str(json.loads((root / "package.json").read_text()).get("scripts", {}).get("test", ""))
        if script.startswith("node --test"):
            return "node", script
        return "npm", command
    return runner, command


def _kind(command: str) -> str:
    if "pytest" in command:
        return "pytest"
    if "node --test" in command:
        return "node"
    if command.startswith("go test"):
        return "go"
    return "custom"


def with_report(runner: str, command: str, only: list[str] | None = None) -> str:
    """``command`` with the options that make the runner write its report (and run only ``only``, if given)."""
    tests = " ".join(shlex.quote(t) for t in only or [])
    if runner == "pytest":
        return (f"{command} -p no:cacheprovider --tb=short -o junit_family=xunit1 --junitxml={REPORT} "
                f"{tests}").strip()
    if runner == "node":
        return (f"{command} --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit "
                f"--test-reporter-destination={REPORT} {tests}").strip()
    if runner == "go":
        return command if "-json" in command else command.replace("go test", "go test -json", 1)
    return command


def run_tests(sandbox: Sandbox, root: Path, configured: str | None = None, timeout: float = 120.0,
              only: list[str] | None = None) -> TestReport | None:
    """Run the tests in ``sandbox``; the report of each test's outcome, or None without a test set-up."""
    found = command_for(root, configured)
    if found is None:
        return None
    runner, base = found
    command = with_report(runner, base, only)
    report_file = root / REPORT
    report_file.unlink(missing_ok=True)
    result = sandbox.run(command, timeout=timeout)
    output = result.output
    outcomes: dict[str, str] = {}
    details: dict[str, str] = {}
    try:
        if runner in ("pytest", "node") and report_file.is_file():
            outcomes = parse_junit(report_file.read_text(errors="replace"), runner, details)
        elif runner == "go":
            outcomes, output = parse_go_json(result.output)
    finally:
        report_file.unlink(missing_ok=True)
    if not outcomes and runner not in ("pytest", "node", "go"):
        outcomes = {"(suite)": PASSED if result.exit_code == 0 and not result.timed_out else FAILED}
    no_tests = runner == "pytest" and result.exit_code == 5  # pytest: nothing collected
    if not outcomes and (result.exit_code != 0 or result.timed_out) and not no_tests:
        outcomes = {"(suite)": ERROR}  # nothing ran (a collection or syntax error, a timeout)
    return TestReport(command=command, exit_code=result.exit_code, outcomes=outcomes, output=output,
                      timed_out=result.timed_out, duration_s=result.duration_s, details=details)


def parse_junit(xml: str, runner: str = "pytest", details: dict[str, str] | None = None) -> dict[str, str]:
    """Outcome per test id from JUnit XML (pytest: ``path.py::Class::name``; node: ``suite > name``); each failed
    or errored test's message and traceback go into ``details`` when given."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return {}
    out: dict[str, str] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        cls = case.get("classname", "")
        file = case.get("file", "")
        if runner == "pytest":
            test_id = _pytest_id(cls, name, file)
        else:
            test_id = f"{cls} > {name}" if cls and cls != "test" else name
        tags = {child.tag for child in case}
        if "error" in tags:
            outcome = ERROR
        elif "failure" in tags or case.get("failure"):
            outcome = FAILED
        elif "skipped" in tags:
            outcome = SKIPPED
        else:
            outcome = PASSED
        if out.get(test_id) in (FAILED, ERROR):  # a teardown error after a failure keeps the worse one
            continue
        out[test_id] = outcome
        bad = next((child for child in case if child.tag in ("failure", "error")), None)
        if details is not None and bad is not None:
            details[test_id] = ((bad.get("message") or "") + "\n" + (bad.text or "")).strip()
    return out


def _pytest_id(cls: str, name: str, file: str) -> str:
    """``tests/test_x.py::TestA::test_b`` from xunit1's file and dotted classname."""
    if not cls:
        return name
    if file:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else file
        rest = cls[len(module):].lstrip(".") if cls.startswith(module) else ""
        return "::".join(p for p in (file, *rest.split(".")) if p) + f"::{name}"
    return f"{cls.replace('.', '/')}.py::{name}"


def parse_go_json(output: str) -> tuple[dict[str, str], str]:
    """Outcome per ``package/Test`` from ``go test -json`` events, and the tests' own output lines."""
    out: dict[str, str] = {}
    text: list[str] = []
    for line in output.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            text.append(line)
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("Action") == "output":
            text.append(str(ev.get("Output", "")).rstrip("\n"))
        test = ev.get("Test")
        action = ev.get("Action")
        if test and action in ("pass", "fail", "skip"):
            out[f"{ev.get('Package', '')}/{test}"] = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}[action]
        elif not test and action == "fail" and not any(k.startswith(f"{ev.get('Package', '')}/") for k in out):
            out[f"{ev.get('Package', '')}/(build)"] = ERROR
    return out, "\n".join(text)


_PYTEST_SECTION = re.compile(r"^=+ (FAILURES|ERRORS) =+$", re.M)


def failure_text(report: TestReport, max_chars: int = 1600) -> str:
    """The part of the console output that explains the failures, cut to about ``max_chars``."""
    text = report.output
    m = _PYTEST_SECTION.search(text)
    if m:
        text = text[m.start():]
        end = re.search(r"^=+ short test summary info =+$", text, re.M)
        if end:
            text = text[:end.start()]
    text = "\n".join(line for line in text.splitlines() if line.strip())
    if len(text) > max_chars:
        from codeagent.tools.base import cut_middle

        text = cut_middle(text, max_chars)
    return text
