import sys, statistics as st, collections
for fn in sys.argv[1:]:
    reps=collections.defaultdict(dict)
    for l in open(fn):
        k,r,a,b,c=l.split(); reps[int(k)][int(r)]=(float(a),float(b),float(c))
    R=len(reps[0]); mx=[];spread=[];rs=collections.defaultdict(list);rw=collections.defaultdict(list);endspread=[];last=[]
    for k,d in reps.items():
        mx.append(max(c-a for a,b,c in d.values()))
        spread.append(max(a for a,b,c in d.values())-min(a for a,b,c in d.values()))
        last.append(max(c for a,b,c in d.values())-min(a for a,b,c in d.values()))
        for r,(a,b,c) in d.items(): rs[r].append(b-a); rw[r].append(c-b)
    print(fn, 'R',R,'max(own) %.2f'%st.median(mx), 'exit spread %.2f'%st.median(spread), 'first exit->last done %.2f'%st.median(last),
          'start', ' '.join('%.2f'%st.median(rs[r]) for r in range(R)), 'wait', ' '.join('%.2f'%st.median(rw[r]) for r in range(R)))
