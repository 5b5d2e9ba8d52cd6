#!/usr/bin/env python3
"""Check that the documentation's links and section citations resolve.

1. Every relative markdown link in README.md, ARCHITECTURE.md and docs/**/*.md
   points to a file or directory that exists, and its #anchor (if any) to a
   heading of that file, with GitHub's anchors (lower case, punctuation dropped,
   spaces to hyphens, -1, -2 for repeats).
2. Every citation of a measurements section by name (docs/measurements/, the
   topic's file, a comma and the heading's start in quotes), in those documents and
   in the comments of src/, trace/, tests/ and scripts/, names the start of a
   heading of that file.
3. docs/measurements.md, the index, links every section of every topic file.

Prints each broken link or citation and exits 1 if there is one; exits 0 quietly.

    python3 scripts/doc_links.py
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CITE = re.compile(r'measurements(/\w+)?\.md(?:#[\w-]+)?\)?,? "([^"]+)"')
COMMENT = re.compile(r"^\s*(?:///?!?|#)\s?")


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path):
    """A markdown file's headings, outside fenced blocks, as written."""
    out, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6} (.*)", line)
        if m:
            out.append(m.group(1).strip())
    return out


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for h in headings(path):
            s = slug(h)
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def prose(text):
    """The text with fenced blocks and code spans blanked, lines kept."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "", line))
    return out


def documents():
    names = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    return names + sorted((ROOT / "docs").rglob("*.md"))


def check_links(doc, problems):
    text = "\n".join(prose(doc.read_text()))
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        where = f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
        if not path.exists():
            problems.append(f"{where}: {target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            problems.append(f"{where}: {target}: no such heading")


def check_citations(path, problems):
    """Citations by name, with comment markers and line breaks taken out."""
    lines = path.read_text().splitlines()
    if path.suffix == ".md":
        text = " ".join(prose("\n".join(lines)))
    else:
        text = " ".join(COMMENT.sub("", l) for l in lines)
    text = re.sub(r"\s+", " ", text)
    for topic, title in CITE.findall(text):
        # Without a topic: the index, whose headings no citation names.
        target = ROOT / "docs" / f"measurements{topic}.md"
        where = path.relative_to(ROOT)
        if not target.exists():
            problems.append(f'{where}: measurements{topic}.md, "{title}": no such file')
        elif not any(h.startswith(title.rstrip(".,")) for h in headings(target)):
            problems.append(f'{where}: measurements{topic}.md, "{title}": no such heading')


def check_index(problems):
    """Every heading below the title of docs/measurements/*.md linked from the index."""
    index = (ROOT / "docs" / "measurements.md").read_text()
    for topic in sorted((ROOT / "docs" / "measurements").glob("*.md")):
        seen = {}
        for h in headings(topic)[1:]:
            s = slug(h)
            n = seen.get(s, 0)
            seen[s] = n + 1
            target = f"measurements/{topic.name}#{s if n == 0 else f'{s}-{n}'}"
            if f"]({target})" not in index:
                problems.append(f"docs/measurements.md: no link to {target}")


def main():
    problems = []
    check_index(problems)
    for doc in documents():
        check_links(doc, problems)
        check_citations(doc, problems)
    for tree, ext in [("src", "rs"), ("trace", "rs"), ("tests", "rs"), ("scripts", "py")]:
        for path in sorted((ROOT / tree).rglob(f"*.{ext}")):
            check_citations(path, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
