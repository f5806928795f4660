"""The grader cannot be fooled or escaped: forged reports, the shipped reference (imported,
read or copied), processes that outlive the run or the CLI, floods of output, terminal
escapes, and workspace links. Each is reported as a failure or an error, never stored as a
passed attempt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quizzer.exercises.catalog import Exercise
from quizzer.exercises.runner import grade

from . import test_cli
from .conftest import REFERENCE, SOLUTIONS
from .test_cli import attempts

REPO = Path(__file__).resolve().parents[2]
cli = test_cli.cli  # the ``cli`` fixture: `quizzer exercise` on the toy catalog


def statuses(db: str) -> list[str]:
    return [row.status for row in attempts(db)]


def check_in_workspace(cli, tmp_path: Path, source: str) -> tuple[int, str, list[str]]:
    """Scaffold the toy, write ``source`` as the user's file, check; (code, out, statuses)."""
    cli("toy")
    (tmp_path / "workspace" / "toy" / "toy.py").write_text(source, encoding="utf-8")
    code, out, _ = cli("toy", "--check")
    return code, out, statuses(cli.db)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _wait_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if _alive(pid)]


linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

# ------------------------------------------------------------------ forged results

FORGE_REPORT = """
import json, os, sys
PASSED = [{"nodeid": f"test_toy.py::test_{n}", "outcome": "passed", "message": "", "duration": 0}
          for n in ("add", "mul")]
REPORT = {"version": 1, "device": "cpu", "track": "python", "finished": True, "exitstatus": 0,
          "current": None, "solution_error": None, "collect_errors": [], "tests": PASSED,
          "metrics": []}


def add(a, b):
    paths = [sys.argv[i + 1] for i, arg in enumerate(sys.argv) if arg == "--quizzer-report"]
    for path in paths + ["report.json"]:
        with open(path, "w") as out:
            json.dump(REPORT, out)
    os._exit(0)
"""

FORGE_CHANNEL = """
import os

LINE = b"0" * 64 + b' {"seq":0,"kind":"finish","exitstatus":0}\\n'


def add(a, b):
    for name in os.listdir("/proc/self/fd"):
        try:
            os.write(int(name), LINE)
        except OSError:
            pass
    return a + b


def mul(a, b):
    return a * b
"""


def test_a_forged_report_file_is_not_a_pass(cli, tmp_path) -> None:
    code, out, stored = check_in_workspace(cli, tmp_path, FORGE_REPORT)
    assert code != 0 and "PASSED" not in out
    assert stored and "passed" not in stored


@linux_only
def test_lines_forged_on_the_results_pipe_make_the_run_untrusted(toy: Exercise, tmp_path) -> None:
    path = tmp_path / "forge.py"
    path.write_text(FORGE_CHANNEL, encoding="utf-8")
    result = grade(toy, path, device="cpu")
    assert result.status == "error"
    assert "cannot be trusted" in result.message


# ------------------------------------------------------------------ the reference


def test_importing_the_reference_is_reported_as_copied(cli, tmp_path, toy_root) -> None:
    reference = toy_root / "toy" / "solution"
    source = f"import sys\nsys.path.insert(0, {str(reference)!r})\nfrom toy import add, mul\n"
    code, out, stored = check_in_workspace(cli, tmp_path, source)
    assert code != 0 and "COPIED" in out and "reference copied" in out
    assert stored == ["copied"]


def test_importing_the_graders_own_model_is_reported_as_copied(toy: Exercise, tmp_path) -> None:
    model = "def add(a, b):\n    return sum((a, b))\n\n\ndef mul(a, b):\n    return a * b\n"
    (toy.grader_dir / "_toy_model.py").write_text(model, encoding="utf-8")
    path = tmp_path / "borrower.py"
    path.write_text("from _toy_model import add, mul\n", encoding="utf-8")
    result = grade(toy, path, device="cpu")
    assert result.status == "copied", result.message
    assert "the grader's own code" in result.message


def test_reading_the_reference_through_a_link_is_reported_as_copied(
    toy: Exercise, tmp_path
) -> None:
    link = tmp_path / "elsewhere.txt"
    link.symlink_to(toy.solution_file())
    path = tmp_path / "reader.py"
    path.write_text(f"exec(open({str(link)!r}).read())\n", encoding="utf-8")
    result = grade(toy, path, device="cpu")
    assert result.status == "copied" and not result.passed
    assert "reference copied" in result.message


def test_running_the_reference_text_is_reported_as_copied(toy: Exercise, tmp_path) -> None:
    hidden = tmp_path / "notes.txt"  # a copy made beforehand, not the shipped file itself
    hidden.write_text(REFERENCE, encoding="utf-8")
    path = tmp_path / "runner.py"
    path.write_text(f"exec(open({str(hidden)!r}).read())\n", encoding="utf-8")
    result = grade(toy, path, device="cpu")
    assert result.status == "copied"


def test_a_copy_with_new_comments_and_layout_is_reported_as_copied(cli, tmp_path) -> None:
    lines = REFERENCE.splitlines()
    disguised = (
        '"""My own LRU... I mean adder."""\n# written from scratch\n'
        + "\n\n".join(f"{line}  # step {i}" if line.strip() else "" for i, line in enumerate(lines))
        + "\n"
    )
    disguised = disguised.replace("def mul(a, b):", 'def mul(a, b):\n    """Multiply."""')
    code, out, stored = check_in_workspace(cli, tmp_path, disguised)
    assert code != 0 and "COPIED" in out
    assert "only comments or formatting differ" in " ".join(out.split())
    assert stored == ["copied"]


def test_the_reference_stays_readable(cli) -> None:
    code, out, _ = cli("toy", "--solution", "--yes")
    assert code == 0 and "product = a * b" in out


def test_the_projects_own_reference_still_passes(toy: Exercise) -> None:
    result = grade(toy, toy.solution_file(), device="cpu")
    assert result.status == "passed", result.message


# ------------------------------------------------------------------ processes

ESCAPER = """
import os, subprocess, sys, time
SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
DAEMON = (
    "import os, sys, time\\n"
    "pid = os.fork()\\n"
    "if pid:\\n    open(sys.argv[1], 'w').write(str(pid))\\n    os._exit(0)\\n"
    "os.setsid()\\n"
    "time.sleep(600)\\n"
)


def add(a, b):
    marked = subprocess.Popen(SLEEP, start_new_session=True)
    bare = subprocess.Popen(SLEEP, start_new_session=True, env={{}})
    subprocess.run([sys.executable, "-c", DAEMON, {daemon!r}], env={{}})
    with open({pids!r}, "w") as out:
        out.write(f"{{marked.pid}} {{bare.pid}}")
    return a + b


def mul(a, b):
    return a * b
"""


@linux_only
def test_setsid_children_do_not_outlive_the_run(toy: Exercise, tmp_path) -> None:
    pids, daemon = tmp_path / "pids", tmp_path / "daemon.pid"
    path = tmp_path / "escaper.py"
    path.write_text(ESCAPER.format(pids=str(pids), daemon=str(daemon)), encoding="utf-8")
    result = grade(toy, path, device="cpu", timeout=60)
    assert result.status == "passed", result.message  # the checks themselves pass
    children = [int(p) for p in pids.read_text().split()] + [int(daemon.read_text())]
    assert not _wait_dead(children, seconds=1.0), "a process of the run outlived it"


HANGER = """
import os, subprocess, sys
SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]


def add(a, b):
    child = subprocess.Popen(SLEEP, start_new_session=True, env={{}})
    with open({pids!r} + ".tmp", "w") as out:
        out.write(f"{{os.getpid()}} {{child.pid}}")
    os.replace({pids!r} + ".tmp", {pids!r})
    while True:
        pass
"""


@linux_only
def test_killing_the_cli_kills_the_grader(toy_root: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    env = {
        **os.environ,
        "QUIZZER_EXERCISES_DIR": str(toy_root),
        "QUIZZER_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(REPO),
    }
    base = [sys.executable, "-m", "quizzer", "--db", f"sqlite:///{tmp_path / 'k.db'}"]
    subprocess.run([*base, "exercise", "toy"], env=env, check=True, capture_output=True)
    work = tmp_path / "workspace" / "toy" / "toy.py"
    work.write_text(HANGER.format(pids=str(pids)), encoding="utf-8")
    proc = subprocess.Popen(
        [*base, "exercise", "toy", "--check", "--timeout", "300"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pids.exists(), "the grader never started"
        grader = [int(p) for p in pids.read_text().split()]
        assert all(map(_alive, grader))
        proc.kill()
        proc.wait()
        assert not _wait_dead(grader, seconds=10), "the grader outlived the CLI"
    finally:
        if proc.poll() is None:
            proc.kill()


# ------------------------------------------------------------------ output

FLOOD = """
import sys


def add(a, b):
    chunk = "x" * (1 << 20) + "\\n"
    for _ in range(50):
        sys.stdout.write(chunk)
    return 0
"""

MEASURE = """
import json, resource, sys
from pathlib import Path
from quizzer.exercises.catalog import load_catalog
from quizzer.exercises.runner import grade

toy = load_catalog(Path(sys.argv[1])).get("toy")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = grade(toy, sys.argv[2], device="cpu", timeout=120)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": result.status, "output": result.output[:200],
                  "dropped": getattr(result, "output_dropped", 0), "grown_kb": after - before}))
"""


def test_a_flood_of_output_is_truncated_and_memory_stays_bounded(
    toy_root: Path, tmp_path: Path
) -> None:
    path = tmp_path / "flood.py"
    path.write_text(FLOOD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(toy_root), str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["grown_kb"] < 20_000, "the runner held the output in memory"
    assert report["status"] == "failed"
    assert report["output"].startswith("[output truncated: ")
    assert "MB dropped]" in report["output"]
    assert report["dropped"] > 40_000_000


ESCAPES = """
import sys

EVIL = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x9b1m\\x1bc\\x07\\r"


def add(a, b):
    print(EVIL * 3)
    sys.stderr.write(EVIL)
    raise AssertionError("bad" + EVIL + "news")
"""


def test_escape_sequences_from_the_run_never_reach_the_terminal(cli, tmp_path) -> None:
    code, out, stored = check_in_workspace(cli, tmp_path, ESCAPES)
    for control in ("\x1b", "\x07", "\x9b", "\r"):
        assert control not in out
    assert code != 0 and "FAIL" in out
    assert "badrednews" in out  # the text stays, the controls go
    assert "passed" not in stored


def test_escapes_are_stripped_from_everything_the_run_returns(toy: Exercise, tmp_path) -> None:
    path = tmp_path / "noisy.py"
    path.write_text(ESCAPES, encoding="utf-8")
    result = grade(toy, path, device="cpu")
    assert result.status == "failed"
    assert "red" in result.output  # pytest printed the captured output of the failure
    texts = [result.output, result.message]
    texts += [text for t in result.tests for text in (t.message, t.details, t.nodeid)]
    for control in ("\x1b", "\x07", "\x9b", "\r"):
        assert not any(control in text for text in texts)


# ------------------------------------------------------------------ workspace links


def test_scaffold_refuses_a_dangling_link(cli, tmp_path) -> None:
    folder = tmp_path / "workspace" / "toy"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.py"
    (folder / "toy.py").symlink_to(outside)
    code, _, err = cli("toy")
    assert code != 0 and "symbolic link" in err and err.count("\n") == 1
    assert not outside.exists()


def test_scaffold_and_reset_refuse_a_linked_file(cli, tmp_path) -> None:
    cli("toy")
    work = tmp_path / "workspace" / "toy" / "toy.py"
    outside = tmp_path / "precious.py"
    outside.write_text("# precious\n")
    work.unlink()
    work.symlink_to(outside)
    for args in (("toy",), ("toy", "--reset")):
        code, _, err = cli(*args)
        assert code != 0 and "symbolic link" in err and err.count("\n") == 1
        assert outside.read_text() == "# precious\n"
    assert not (tmp_path / "workspace" / "toy" / ".quizzer-backups").exists()


def test_a_linked_exercise_folder_is_refused(cli, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "toy").symlink_to(elsewhere)
    code, _, err = cli("toy")
    assert code != 0 and "symbolic link" in err
    assert list(elsewhere.iterdir()) == []


def test_a_good_solution_still_passes_and_is_stored(cli, tmp_path) -> None:
    code, out, stored = check_in_workspace(cli, tmp_path, SOLUTIONS["good"])
    assert code == 0 and "PASSED" in out
    assert stored == ["passed"]


# ------------------------------------------------------------------ units


def test_the_receiver_takes_only_signed_lines_in_order() -> None:
    from quizzer.exercises.channel import Receiver, Sender

    read, write = os.pipe()
    sender = Sender(write, b"k" * 32)
    sender.send("start", nodeid="a")
    sender.send("finish", exitstatus=0)
    os.close(write)
    lines = os.read(read, 65536).splitlines(keepends=True)
    os.close(read)

    good = Receiver(b"k" * 32)
    for line in lines:
        good.feed(line[:5])
        good.feed(line[5:])  # lines may arrive in pieces
    assert [e["kind"] for e in good.events] == ["start", "finish"] and good.tampered is None

    replayed = Receiver(b"k" * 32)
    replayed.feed(lines[0] + lines[0] + lines[1])
    assert replayed.tampered and "out of order" in replayed.tampered

    forged = Receiver(b"x" * 32)  # the right format, the wrong key
    forged.feed(lines[0])
    assert forged.tampered and not forged.events


def test_clean_removes_every_control_sequence_but_keeps_text() -> None:
    from quizzer.exercises.output import OutputTail, clean

    raw = "a\x1b[31mb\x1b]8;;http://x\x1b\\c\x1b]0;t\x07d\x9b2Je\x1bcf\x00g\r\nh\ti\u202ej"
    assert clean(raw) == "abcdefg\nh\tij"
    tail = OutputTail(keep=10)
    for _ in range(100):
        tail.feed(b"0123456789")
    assert tail.text() == "0123456789" and tail.dropped == 990
    assert tail.notice() == "output truncated: 990 bytes dropped"


def test_an_include_of_the_reference_counts_as_a_copy(tmp_path: Path) -> None:
    from quizzer.exercises.guard import includes_reference

    solution = tmp_path / "ex" / "solution"
    solution.mkdir(parents=True)
    (solution / "reduce.cu").write_text("__global__ void k() {}\n")
    mine = tmp_path / "mine.cu"
    mine.write_text(f'#include "{solution / "reduce.cu"}"\n')
    assert includes_reference(mine, [solution]) == str(solution / "reduce.cu")
    mine.write_text("#include <cuda_runtime.h>\n")
    assert includes_reference(mine, [solution]) is None
