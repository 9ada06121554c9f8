import re, sys
def an(tf, ef):
    sizes=[]
    for l in open(ef):
        m=re.match(r'SIZE (\w+) (\d+) start (\d+) ms',l)
        if m: sizes.append((m.group(1),int(m.group(2)),int(m.group(3))))
    comp=[]
    for l in open(tf):
        m=re.match(r'\s*(\d+)\s+(\d+)\s',l)
        if m: comp.append((int(m.group(1)),l.rstrip()))
    out={}
    for i,(op,sz,t) in enumerate(sizes):
        end = sizes[i+1][2] if i+1<len(sizes) else 10**9
        inwin=[c for c in comp if t<=c[0]<end]
        c2=[c for c in inwin if re.match(r'\s*\d+\s+\d+\s+\S*\s*4\s',c[1])]
        nb=[c for c in inwin if 'io.nbcx' in c[1] or 'NbcxBench' in c[1]]
        out[(op,sz)]=(len(inwin),len(c2),len(nb))
    return out
for r in sys.argv[1:]:
    a=an(f'old-{r}.txt',f'old-{r}.err'); b=an(f'new-{r}.txt',f'new-{r}.err')
    print(f"ranks {r}: compilations started while a size was measured: all / C2 / of io.nbcx or NbcxBench methods")
    print("| op | bytes | before (jit-warmup 2000) | after (20000 + dry runs) |")
    print("|---|---:|---|---|")
    for k in a: print(f"| i{k[0]} | {k[1]} | {a[k][0]} / {a[k][1]} / {a[k][2]} | {b[k][0]} / {b[k][1]} / {b[k][2]} |" if k in b else k)
