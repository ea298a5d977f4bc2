#!/usr/bin/env python3
"""Mutation survey of the parser and verifier against ptxas.

Mutates ptxas-valid corpus files (drop, duplicate, swap adjacent or distant
tokens, replace a token by another of the file, truncate) and tallies, for
each mutant, what `ptx-opt --verify` says against what ptxas says:
parse error / verifier error / accepted, by ptxas accepts / rejects.
"accepted / ptxas-rejects" rows are checks the verifier lacks (link-time
errors such as unresolved externs aside); "verify-err / ptxas-ok" rows would
be false errors. Interesting mutants are written to --keep DIR.

usage: tools/mutation-survey.py --ptx-opt target/release/ptx-opt [--corpus ../shared/corpus]
                                [--count 1000] [--seed 1] [--keep DIR]
ptxas: $PTXAS, else ~/.cache/ptx-opt-tools/bin/ptxas (tools/setup-ptx-tools.sh).
"""
import argparse, os, random, re, subprocess, tempfile

TOKEN = re.compile(r"%?[A-Za-z_$][\w$.]*|\d[\w.]*|\S")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptx-opt", required=True)
    ap.add_argument("--corpus", default=os.path.join(here, "..", "..", "shared", "corpus"))
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep")
    args = ap.parse_args()
    ptxas = os.environ.get("PTXAS") or os.path.expanduser("~/.cache/ptx-opt-tools/bin/ptxas")
    rnd = random.Random(args.seed)
    lines = open(os.path.join(args.corpus, "MANIFEST.tsv")).read().splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, l.split("\t"))) for l in lines[1:]]
    rows = [r for r in rows if r["ptxas_ok"] == "yes" and int(r["bytes"]) < 60000 and r["ptxas_mode"] == "whole-program"]
    tally = {}
    for k in range(args.count):
        row = rnd.choice(rows)
        text = open(os.path.join(args.corpus, row["file"]), errors="replace").read()
        toks = list(TOKEN.finditer(text))
        kind = rnd.choice(["drop", "swap", "dup", "swapfar", "replace", "truncate"])
        i = rnd.randrange(len(toks) - 1)
        a, b = toks[i], toks[i + 1]
        if kind in ("swapfar", "replace"):
            j = rnd.randrange(len(toks))
            a, b = toks[min(i, j)], toks[max(i, j)]
            if a.start() == b.start():
                continue
        if kind == "drop":
            t = text[:a.start()] + text[a.end():]
        elif kind in ("swap", "swapfar"):
            t = text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]
        elif kind == "replace":
            t = text[:a.start()] + b.group() + text[a.end():]
        elif kind == "truncate":
            t = text[:rnd.randrange(len(text))]
        else:
            t = text[:a.end()] + " " + a.group() + text[a.end():]
        ours = subprocess.run([args.ptx_opt, "--verify", "-"], input=t, capture_output=True, text=True)
        if ours.returncode != 0 and subprocess.run([args.ptx_opt, "-", "-o", os.devnull], input=t, capture_output=True, text=True).returncode != 0:
            tally["parse-err"] = tally.get("parse-err", 0) + 1
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(t)
        theirs = subprocess.run([ptxas, f"-arch={row['arch_used']}", f.name, "-o", os.devnull], capture_output=True, text=True)
        os.unlink(f.name)
        key = ("accepted" if ours.returncode == 0 else "verify-err") + (" / ptxas-ok" if theirs.returncode == 0 else " / ptxas-rejects")
        tally[key] = tally.get(key, 0) + 1
        if key in ("accepted / ptxas-rejects", "verify-err / ptxas-ok"):
            print(f"{key}: {row['file']} ({kind} `{a.group()}` `{b.group()}`): {(ours.stderr or (theirs.stdout + theirs.stderr)).strip().splitlines()[0][:160]}")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                open(os.path.join(args.keep, f"mutant-{args.seed}-{k}.ptx"), "w").write(t)
    for key, n in sorted(tally.items()):
        print(f"{n:6} {key}")


if __name__ == "__main__":
    main()
