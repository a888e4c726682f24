"""Loading the user's prompt templates and skills: ``.venv/bin/python bench/extensions_bench.py``.

Writes a home and a project with ``--templates`` templates and ``--skills`` skills (each with
YAML frontmatter) in a temp folder, then measures :func:`agent_tui.agent.resources.load_resources`
in a fresh process (PyYAML's import included: what a start pays, in the loading thread) and
again warm in the same process. Prints the median, min and max over ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, sys, time
t0 = time.perf_counter()
from agent_tui.agent.resources import load_resources
t1 = time.perf_counter()
r = load_resources(sys.argv[1], sys.argv[2], env={"HOME": sys.argv[3]})
t2 = time.perf_counter()
load_resources(sys.argv[1], sys.argv[2], env={"HOME": sys.argv[3]})
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "warm": t3 - t2,
                  "templates": len(r.templates), "skills": len(r.skills), "warnings": len(r.warnings)}))
"""


def make_files(root: Path, templates: int, skills: int) -> tuple[Path, Path, Path]:
    project, home, config = root / "project", root / "home", root / "config"
    for i in range(templates):
        folder = [project / ".agent-tui/prompts", home / ".claude/commands", home / ".pi/agent/prompts"][
            i % 3
        ]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"t{i}.md").write_text(
            f'---\ndescription: Template {i}\nargument-hint: "<path> [focus]"\n---\nReview $1 for ${{2:-bugs}}.\n'
        )
    for i in range(skills):
        folder = [home / ".agents/skills", home / ".claude/skills", project / ".claude/skills"][
            i % 3
        ] / f"s{i}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: s{i}\ndescription: Skill {i}. Use when asked for {i}.\n---\n# Skill {i}\n\nSteps.\n"
        )
    project.mkdir(exist_ok=True)
    return project, home, config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--templates", type=int, default=30)
    parser.add_argument("--skills", type=int, default=15)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, home, config = make_files(Path(tmp), args.templates, args.skills)
        samples = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", PROBE, str(project), str(config), str(home)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            samples.append(json.loads(out))
    last = samples[-1]
    print(
        f"{last['templates']} templates, {last['skills']} skills, {last['warnings']} warnings; "
        f"{args.runs} fresh processes"
    )
    for key, what in (
        ("import", "import agent_tui.agent.resources"),
        ("first", "first load (PyYAML imported)"),
        ("warm", "second load"),
    ):
        values = [1000 * s[key] for s in samples]
        print(
            f"  {what:<36} median {statistics.median(values):7.1f} ms"
            f"  (min {min(values):.1f}, max {max(values):.1f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
