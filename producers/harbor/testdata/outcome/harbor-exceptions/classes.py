"""List every class defined in Harbor's src/harbor that derives from BaseException.

Usage: python3 classes.py SRC_ROOT  -> TSV: name, path:line, base chain.
Harbor targets Python >= 3.12 (PEP 701 f-strings), which python3.11's ast
cannot parse, so class statements are found with a line regex instead; every
class statement in Harbor's tree fits on one line. Bases are resolved by bare
name against the tree's own classes first, then Python's builtins; a base
defined outside the tree is kept as "external".
"""
import builtins, os, re, sys
root = sys.argv[1]
pat = re.compile(r'^\s*class\s+(\w+)\s*\(([^)]*)\)\s*:')
defs = {}
for dp, dn, fn in os.walk(root):
    dn.sort()
    for f in sorted(fn):
        if not f.endswith('.py'):
            continue
        p = os.path.join(dp, f)
        rel = os.path.relpath(p, root)
        for i, line in enumerate(open(p, encoding='utf-8'), 1):
            m = pat.match(line)
            if m:
                bases = [b.strip().split('.')[-1].split('[')[0] for b in m.group(2).split(',') if b.strip() and '=' not in b]
                defs.setdefault(m.group(1), []).append((rel, i, bases))
def chain(name, seen):
    if name in seen: return None
    if name in defs:
        for rel, line, bases in defs[name]:
            for b in bases:
                c = chain(b, seen | {name})
                if c is not None: return [b] + c
        return None
    bi = getattr(builtins, name, None)
    if isinstance(bi, type) and issubclass(bi, BaseException):
        return []
    return None
for name in sorted(defs):
    for rel, line, bases in defs[name]:
        for b in bases:
            c = chain(b, {name})
            if c is not None:
                print(f"{name}\t{rel}:{line}\t{' < '.join([b]+c)}")
                break
