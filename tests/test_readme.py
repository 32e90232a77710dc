"""The README's Python examples run, and its first two lines are the two commands."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)


def test_readme_starts_with_the_two_commands():
    first = [line.strip() for line in README.read_text().splitlines()[:2]]
    assert first == ["make figures", "make test"]
