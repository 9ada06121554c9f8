"""The busy periods of a captured link (a classic pcap file).

Packets of 200 bytes or more (data, not acknowledgements) are grouped
into bursts separated by at least 3 ms of silence; for each burst of
1 MB or more it prints its start, duration, bytes, rate, and the
silences of more than 0.3 ms inside it (when, into the burst, and how
long). A link kept full shows bursts at the link's rate with no
silences.
"""

import struct
import sys


def packets(path: str) -> list[tuple[float, int]]:
    """(time in seconds, length on the wire) of every packet."""
    with open(path, "rb") as f:
        magic = struct.unpack("<I", f.read(24)[:4])[0]
        unit = 1e-9 if magic == 0xA1B23C4D else 1e-6
        out = []
        while len(head := f.read(16)) == 16:
            sec, frac, incl, orig = struct.unpack("<IIII", head)
            f.read(incl)
            out.append((sec + frac * unit, orig))
    return out


def main() -> None:
    pk = [(t, n) for t, n in packets(sys.argv[1]) if n >= 200]
    t0 = pk[0][0]
    bursts: list[dict] = []
    for t, n in pk:
        b = bursts[-1] if bursts else None
        if b is None or t - b["end"] > 0.003:
            bursts.append({"start": t, "end": t, "bytes": n, "gaps": []})
            continue
        if t - b["end"] > 0.0003:
            b["gaps"].append((b["end"] - b["start"], t - b["end"]))
        b["end"] = t
        b["bytes"] += n
    print("start_ms duration_ms MB rate_MB/s silent_ms silences(at_ms:ms)")
    for b in bursts:
        d = b["end"] - b["start"]
        if b["bytes"] < 1e6 or d <= 0:
            continue
        silent = sum(g for _, g in b["gaps"])
        gaps = " ".join(f"{a * 1e3:.1f}:{g * 1e3:.2f}" for a, g in b["gaps"][:8])
        print(
            f"{(b['start'] - t0) * 1e3:.1f} {d * 1e3:.1f} {b['bytes'] / 1e6:.2f} "
            f"{b['bytes'] / d / 1e6:.1f} {silent * 1e3:.1f} {gaps}"
        )


if __name__ == "__main__":
    main()
