"""Per-test outcomes from the runners' machine-readable reports (real pytest and node runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeagent.agent.testreport import failure_text, parse_go_json, parse_junit, run_tests
from codeagent.sandbox import SandboxConfig, open_sandbox
from tests.agent.conftest import make_repo


def test_pytest_outcomes_per_test_id_and_failure_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    box = open_sandbox(SandboxConfig(kind="local"), repo)
    try:
        report = run_tests(box, repo)
    finally:
        box.close()
    assert report.failing == {"tests/test_calc.py::test_division"}
    assert len(report.passing) == 4 and not report.ok
    assert "--junitxml" in report.command and not (repo / ".codeagent-report.xml").exists()
    text = failure_text(report)
    assert text.startswith("=") and "assert 3.0 == 3.5" in text and "short test summary" not in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_test_runner_outcomes(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    (tmp_path / "a.test.js").write_text("const test = require('node:test');\nconst assert = require('assert');\n"
                                        "test('adds', () => assert.equal(1 + 1, 2));\n"
                                        "test('breaks', () => assert.equal(1, 2));\n")
    box = open_sandbox(SandboxConfig(kind="local"), tmp_path)
    try:
        report = run_tests(box, tmp_path)
    finally:
        box.close()
    assert report.outcomes == {"adds": "passed", "breaks": "failed"}


def test_junit_and_go_json_parsing() -> None:
    xml = ('<testsuites><testsuite><testcase classname="tests.test_a" file="tests/test_a.py" name="test_x"/>'
           '<testcase classname="tests.test_a.TestK" file="tests/test_a.py" name="test_y"><failure/></testcase>'
           '<testcase classname="" name="tests.test_b"><error/></testcase>'
           '<testcase classname="tests.test_a" file="tests/test_a.py" name="test_z"><skipped/></testcase>'
           '</testsuite></testsuites>')
    assert parse_junit(xml) == {"tests/test_a.py::test_x": "passed", "tests/test_a.py::TestK::test_y": "failed",
                                "tests.test_b": "error", "tests/test_a.py::test_z": "skipped"}
    assert parse_junit("not xml") == {}
    details: dict[str, str] = {}
    parse_junit(xml.replace("<failure/>", '<failure message="NameError: x">tests/test_a.py:3: in test_y</failure>'),
                details=details)
    assert details == {"tests/test_a.py::TestK::test_y": "NameError: x\ntests/test_a.py:3: in test_y", "tests.test_b": ""}
    events = "\n".join(json.dumps(e) for e in [
        {"Action": "run", "Package": "m/calc", "Test": "TestAdd"},
        {"Action": "output", "Package": "m/calc", "Test": "TestAdd", "Output": "calc_test.go:9: got 1\n"},
        {"Action": "fail", "Package": "m/calc", "Test": "TestAdd"},
        {"Action": "pass", "Package": "m/calc", "Test": "TestSub"}])
    outcomes, text = parse_go_json(events)
    assert outcomes == {"m/calc/TestAdd": "failed", "m/calc/TestSub": "passed"} and "got 1" in text
