#!/usr/bin/env python3
# Prints fmath.cl's Payne-Hanek table: for s = -24 .. 104, F(s) = (2^s 2/pi)
# mod 4 as two doubles f0 + f1 (106 bits), f0 the nearest double to F(s).
# A developer tool (needs python3-mpmath): python3 compiler/builtins/fmath-table.py
import mpmath

mpmath.mp.prec = 800
two_over_pi = 2 / mpmath.pi
rows = []
for s in range(-24, 105):
    f = mpmath.fmod(mpmath.mpf(2) ** s * two_over_pi, 4)
    f0 = float(f)
    f1 = float(f - mpmath.mpf(f0))
    rows.append("{%s, %s}" % (f0.hex(), f1.hex()))
for i in range(0, len(rows), 2):
    print("    " + ", ".join(rows[i:i + 2]) + ",")
