"""Count the torch names a set of checked-out repositories use, and whether autogradcli has each.

    python tools/api_usage/count.py /tmp/api_corpus/* -o tools/api_usage/counts.json

Each argument is one repository (a folder); every .py and .ipynb file under it is read with the
same analysis as ``agrad port`` (autogradcli/cli/port_analysis.py). Files Python 3 cannot parse
are skipped and counted. The JSON keeps names and counts, never the sources.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict

from autogradcli.cli.port_analysis import PortSyntaxError, file_uses
from autogradcli.cli.port_table import iter_sources, present


def count(repos: list[str]) -> dict:
    """{"names": [{name, files, repos, uses, present}], "files": {repo/path: [name index]}}."""
    uses: dict[str, int] = defaultdict(int)
    files_of: dict[str, set[str]] = defaultdict(set)
    repos_of: dict[str, set[str]] = defaultdict(set)
    per_file: dict[str, set[str]] = {}
    skipped: list[str] = []
    for repo in repos:
        repo_name = os.path.basename(os.path.normpath(repo))
        for path in iter_sources(repo):
            key = f"{repo_name}/{os.path.relpath(path, repo)}"
            try:
                found = file_uses(path, present, skip_bad_cells=True)
            except (PortSyntaxError, RecursionError):
                skipped.append(key)
                continue
            if not found:
                continue
            per_file[key] = {u.name for u in found}
            for u in found:
                uses[u.name] += 1
                files_of[u.name].add(key)
                repos_of[u.name].add(repo_name)
    names = sorted(uses, key=lambda n: (-len(files_of[n]), -uses[n], n))
    index = {n: i for i, n in enumerate(names)}
    rows = [
        {
            "name": n,
            "files": len(files_of[n]),
            "repos": len(repos_of[n]),
            "uses": uses[n],
            "present": present(n),
        }
        for n in names
    ]
    return {
        "repos": sorted(os.path.basename(os.path.normpath(r)) for r in repos),
        "skipped": sorted(skipped),
        "names": rows,
        "files": {k: sorted(index[n] for n in v) for k, v in sorted(per_file.items())},
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, count, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="checked-out repositories (folders)")
    parser.add_argument(
        "-o", "--output", default=os.path.join(os.path.dirname(__file__), "counts.json")
    )
    args = parser.parse_args(argv)
    sys.setrecursionlimit(10000)
    result = count(args.repos)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=0, separators=(",", ":"))
        f.write("\n")
    print(f"{len(result['names'])} names in {len(result['files'])} files; wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
