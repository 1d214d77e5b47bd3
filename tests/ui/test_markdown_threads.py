"""Markdown renders are safe while the warm-up thread is still loading Pygments.

The warm-up (`ui.common.markdown.warm_up`) imports Pygments and renders once in a worker thread
while the window may already render its first rows. Both used to run at the same time: in
about one fresh process in five the row's render failed ("cannot import name
'HtmlFormatter'"), and a render could use the other's code-block rule. Each run below is a
fresh interpreter, because the race is in first imports.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 8

_RACE = """
from ui.common.markdown import render_markdown, wait_warm, warm_up
warm_up()
rendered = render_markdown("```python\\nprint('hi')\\n```\\n\\n```rust\\nfn main() {}\\n```\\n")
wait_warm(30)
assert rendered.code_blocks == ["print('hi')\\n", "fn main() {}\\n"], rendered.code_blocks
assert 'href="copy:0"' in rendered.html and 'href="copy:1"' in rendered.html
print("ok")
"""


def _race() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RACE], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


async def test_rendering_while_the_warm_up_runs_never_fails() -> None:
    for _ in range(RUNS):
        done = await asyncio.to_thread(_race)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
        assert "Exception in thread" not in done.stderr, done.stderr
