"""A target stays in its folder: the files outside its package and its tests that name it are
the ones docs/targets.md lists in its "What adding `<target>` touched outside its folder and its
tests" section, and there are at most ``MAX_SHARED_FILES`` (issue 39: the change that adds
the Azure target touches at most 5 files outside its folder and its tests).

A file names a target when it holds one of the section's searched terms at a word's start,
case-insensitive (the target's name, so its ``<name>*`` keys and ``Pulumi.<name>-dev.yaml``
too, and identifiers only it uses, such as its Pulumi provider's package). The files are the
repository's (``git ls-files``, untracked ones not ignored included); on a mismatch the test
prints them as ``git diff --stat`` does, with the lines that name the target.

A section may also name the commit that added the target (``Commit: `<hash>```, issue 50: "adding
a seventh target touches at most 5 files outside its folder and its cloud's"): every file that
commit touched outside the target's folders must be in the section's table, and at most
``MAX_SHARED_FILES`` of them besides README's list.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from infra.targets import registry

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "targets.md"
#: issue 39's bound on the files outside a new target's folder and its tests
MAX_SHARED_FILES = 5
#: files that name every registered target by rule (README's list of targets, checked below):
#: listed in the table like any other, outside the bound (adding any target touches them)
EVERY_TARGET = ("README.md",)
HEADING = re.compile(
    r"^### What adding `(?P<target>[^`]+)` touched outside its folder and its tests"
)
SEARCHED = "Searched for:"
COMMIT = re.compile(r"^Commit: `(?P<commit>[0-9a-f]{7,40})`")
ROW = re.compile(r"^\| `(?P<path>[^`]+)` \|")
TERM = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Footprint:
    """One section of docs/targets.md: a target, the terms that name it, the files listed."""

    target: str
    terms: tuple[str, ...]
    listed: tuple[str, ...]
    #: the commit that added the target, where the section names it
    commit: str | None = None


def footprints(text: str) -> list[Footprint]:
    """Every footprint section of ``text`` (docs/targets.md), each up to the next heading."""
    found: list[Footprint] = []
    section: list[str] = []
    for line in [*text.splitlines(), "# end"]:
        if line.startswith("#") and section:
            found.append(_section(section))
            section = []
        if HEADING.match(line) or section:
            section.append(line)
    return found


def _section(lines: list[str]) -> Footprint:
    heading = HEADING.match(lines[0])
    assert heading is not None
    terms = [t for line in lines if line.startswith(SEARCHED) for t in TERM.findall(line)]
    listed = [row["path"] for line in lines if (row := ROW.match(line))]
    commits = [found["commit"] for line in lines if (found := COMMIT.match(line))]
    return Footprint(heading["target"], tuple(terms), tuple(listed), next(iter(commits), None))


def naming(terms: tuple[str, ...]) -> re.Pattern[str]:
    """What names the target: any term at a word's start, case-insensitive."""
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + ")", re.IGNORECASE)


def own_folders(target: str) -> tuple[str, ...]:
    """The target's package (its registry entry's) and its cloud's (``infra/clouds/<cloud>/``,
    where the entry's ``cloud`` checks credentials), each with the tests folder mirroring it."""
    entry = registry.get(target)
    modules = [type(entry).__module__]
    if entry.cloud is not None:
        modules.append(entry.cloud.credentials.__module__)
    folders: list[str] = []
    for module in modules:
        folder = Path(sys.modules[module].__file__ or "").parent.relative_to(ROOT).as_posix()
        mirror = folder.replace("infra/", "tests/", 1)
        folders += [f"{folder}/", f"{mirror}/"]
    return tuple(dict.fromkeys(folders))


def repository_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    ).stdout.decode()  # fmt: skip
    return sorted({p for p in listed.split("\0") if p and (ROOT / p).is_file()})


def shared_files_naming(footprint: Footprint) -> dict[str, int]:
    """Files outside the target's folders that name it -> how many of their lines do."""
    pattern, mine = naming(footprint.terms), own_folders(footprint.target)
    found: dict[str, int] = {}
    for path in repository_files():
        if path.startswith(mine):
            continue
        text = (ROOT / path).read_bytes().decode("utf-8", errors="ignore")
        lines = sum(1 for line in text.splitlines() if pattern.search(line))
        if lines:
            found[path] = lines
    return found


def stat(footprint: Footprint, found: dict[str, int]) -> str:
    """``found`` as ``git diff --stat`` shows a change: a path, a bar, its lines naming it."""
    width = max((len(p) for p in found), default=0)
    rows = [f" {path.ljust(width)} | {count}" for path, count in sorted(found.items())]
    outside = ", ".join(own_folders(footprint.target))
    rows.append(f" {len(found)} files outside {outside} name {footprint.target}")
    return "\n".join(rows)


SECTIONS = footprints(DOC.read_text(encoding="utf-8"))


def test_docs_state_a_footprint_for_a_registered_target() -> None:
    assert SECTIONS, f"{DOC.name} has no 'What adding `<target>` touched' section"
    for footprint in SECTIONS:
        assert footprint.target in registry.names(), footprint
        assert footprint.target in footprint.terms, f"{SEARCHED} must name the target itself"


@pytest.mark.parametrize("footprint", SECTIONS, ids=lambda f: f.target)
def test_the_listed_files_are_those_naming_the_target(footprint: Footprint) -> None:
    found = shared_files_naming(footprint)
    assert sorted(found) == sorted(footprint.listed), (
        f"docs/targets.md lists {sorted(footprint.listed)} for {footprint.target}; these name "
        f"it (move what is the target's into its folder, or list it):\n"
        f"{stat(footprint, found)}"
    )


@pytest.mark.parametrize("footprint", SECTIONS, ids=lambda f: f.target)
def test_a_target_touches_at_most_five_shared_files(footprint: Footprint) -> None:
    found = shared_files_naming(footprint)
    bounded = {path: lines for path, lines in found.items() if path not in EVERY_TARGET}
    assert len(bounded) <= MAX_SHARED_FILES, stat(footprint, found)


def committed_files(commit: str) -> list[str] | None:
    """The files ``commit`` touched (None where the clone does not hold it: a shallow one)."""
    done = subprocess.run(
        ["git", "show", "--name-only", "--format=", "--no-renames", commit],
        cwd=ROOT, capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    if done.returncode != 0:
        return None
    return [line for line in done.stdout.decode().splitlines() if line]


@pytest.mark.parametrize("footprint", [s for s in SECTIONS if s.commit], ids=lambda f: f.target)
def test_the_commit_that_added_a_target_touched_at_most_five_shared_files(
    footprint: Footprint,
) -> None:
    assert footprint.commit is not None
    touched = committed_files(footprint.commit)
    if touched is None:
        pytest.skip(f"this clone does not hold commit {footprint.commit} (a shallow clone)")
    mine = own_folders(footprint.target)
    assert f"{mine[0]}entry.py" in touched, f"{footprint.commit} did not add {mine[0]}entry.py"
    outside = sorted(path for path in touched if not path.startswith(mine))
    assert set(outside) <= set(footprint.listed), (
        f"{footprint.commit} touched {outside}; docs/targets.md lists {sorted(footprint.listed)}"
    )
    bounded = [path for path in outside if path not in EVERY_TARGET]
    assert len(bounded) <= MAX_SHARED_FILES, bounded


def test_the_readme_names_every_registered_target() -> None:
    """README's list of targets (what `--target` offers) is the registry's, not a stale copy."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"offers the same registered targets \(([^)]*)\)", readme)
    assert listed, "README no longer says which targets --target offers"
    named = set(TERM.findall(listed.group(1)))
    assert named == set(registry.names()), (sorted(named), registry.names())


def test_the_section_and_the_scan_read_what_they_should() -> None:
    doc = """## Adding a target
### What adding `moon` touched outside its folder and its tests
Searched for: `moon`, `lunar-sdk`
Commit: `0123abc` (the commit that added it)
| file | what |
| --- | --- |
| `Pulumi.yaml` | its keys |
| `docs/moon.md` | its page |
## Next
| `README.md` | not in the section |
"""
    (section,) = footprints(doc)
    listed = ("Pulumi.yaml", "docs/moon.md")
    assert section == Footprint("moon", ("moon", "lunar-sdk"), listed, "0123abc")
    pattern = naming(section.terms)
    for named in ("moonGpuSize: x", "Pulumi.moon-dev.yaml", "the MOON target", "lunar-sdk>=1"):
        assert pattern.search(named), named
    for other in ("honeymoon", "a lunar module", "harmoonic"):
        assert not pattern.search(other), other
