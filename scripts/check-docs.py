#!/usr/bin/env python3
"""Checks jobq's Markdown: every relative link (and its #anchor, by GitHub's heading slugs) resolves, and
README.md stays a user's guide under 20,000 bytes. Run from anywhere: python3 scripts/check-docs.py
Exit status 0 if all holds, 1 otherwise, with one line per problem."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_LIMIT = 20_000


def slug(heading):
    s = heading.strip().replace('`', '').lower()
    s = re.sub(r'[^\w\- ]', '', s)  # GitHub drops punctuation but keeps - and _
    return s.replace(' ', '-')


def anchors(path):
    found, counts, fence = set(), {}, False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                fence = not fence
                continue
            m = None if fence else re.match(r'#{1,6} (.*)', line)
            if m:
                s = slug(m.group(1))
                n = counts.get(s, 0)
                counts[s] = n + 1
                found.add(s if n == 0 else f'{s}-{n}')
    return found


def problems():
    files = [os.path.join(ROOT, 'README.md'), os.path.join(ROOT, 'CONTRIBUTING.md')]
    files += sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))
    for f in files:
        with open(f, encoding='utf-8') as fh:
            text = fh.read()
        text = re.sub(r'```.*?```', '', text, flags=re.S)  # a link in a code block is not a link
        text = re.sub(r'`[^`\n]*`', '', text)
        for m in re.finditer(r'\]\(([^)\s]+)\)', text):
            target = m.group(1)
            if re.match(r'[a-z]+:', target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            where = os.path.relpath(f, ROOT)
            if not os.path.exists(full):
                yield f'{where}: link to a missing file: {target}'
            elif anchor and full.endswith('.md') and anchor not in anchors(full):
                yield f'{where}: link to a missing heading: {target}'
    size = os.path.getsize(os.path.join(ROOT, 'README.md'))
    if size >= README_LIMIT:
        yield f'README.md: {size} bytes, over the {README_LIMIT} a user\'s guide may take; move details to docs/'


if __name__ == '__main__':
    found = list(problems())
    for p in found:
        print(p)
    sys.exit(1 if found else 0)
