"""README.md's generated tables (launch arguments, node parameters) match the code."""
from pathlib import Path

from vehicle_sim import docs

README = Path(__file__).resolve().parents[2] / "README.md"


def test_generated_blocks_are_current():
    text = README.read_text()
    for (begin, end), block in docs.current_blocks().items():
        assert begin in text and end in text, f"README lacks the {begin} block"
        current = begin + text.split(begin, 1)[1].split(end, 1)[0] + end
        assert current == block, ("README is stale: run "
                                  "`python -m vehicle_sim.docs --write README.md`")


def test_readme_names_the_commands_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "scripts/test.sh" in ci and "scripts/test.sh" in README.read_text()
    assert "scripts/run.sh" in README.read_text()
