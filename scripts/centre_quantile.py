#!/usr/bin/env python3
"""Computes the table of `stats::rounds::centre_quantile`: for K independent normal
figures of mean mu and standard deviation sigma, the q with P(|x - mu| <= q*s) = 0.95,
where x is one of the figures and s the standard deviation of all K (x counted).

    scripts/centre_quantile.py [--grid N] [K ...]      (default: K = 3..21, N = 400)

Beside each q(K) it prints how often Student's t(0.975, K-1) times the same s holds mu
(the multiple used before): more than 95%, since s counts the figure.

How: write x - mu = r + e, with r = x - mean and e = mean - mu ~ N(0, sigma^2/K),
independent of r and s. In units of sigma, r = u*sqrt((K-1)/K) with u ~ N(0, 1), and
(K-1)*s^2 = u^2 + V with V ~ chi^2(K-2) independent of u (Helmert's rotation). So the
coverage is E[Phi(sqrt(K)*(q*s - r)) - Phi(sqrt(K)*(-q*s - r))] over u and w = sqrt(V)
(a chi variable with K-2 degrees of freedom, whose density is smooth at 0), integrated
by Simpson's rule on an N x N grid (u in [-9, 9], w in [0, 12]) and solved for 0.95 by
bisection. N = 400 and 1600 agree to five digits for K >= 4; for K = 3, whose
integrand has a kink where s = 0, they give 2.81362 and 2.81370, and the table has the
latter (`--grid 1600 3`, 2026-11-27).

Nothing is measured; nothing is written.
"""
import math
import sys


def simpson(n):
    return [1 if i in (0, n) else (4 if i % 2 else 2) for i in range(n + 1)]


def points(k, n):
    """(r, s, weight) over the grid, for K = k."""
    nu = k - 2
    hu, hw = 18.0 / n, 12.0 / n
    su = sw = simpson(n)
    norm = (nu / 2 - 1) * math.log(2) + math.lgamma(nu / 2)
    out = []
    for i in range(n + 1):
        u = -9.0 + i * hu
        pu = math.exp(-u * u / 2) / math.sqrt(2 * math.pi) * su[i] * hu / 3
        for j in range(n + 1):
            w = j * hw
            if w == 0.0:
                if nu > 1:
                    continue  # the density is 0 there
                pw = math.exp(-norm)
            else:
                pw = math.exp((nu - 1) * math.log(w) - w * w / 2 - norm)
            out.append((u * math.sqrt((k - 1) / k), math.sqrt((u * u + w * w) / (k - 1)),
                        pu * pw * sw[j] * hw / 3))
    return out


def coverage(q, pts, k):
    c = math.sqrt(k / 2)
    return sum(wt * 0.5 * (math.erf(c * (q * s - r)) - math.erf(c * (-q * s - r)))
               for r, s, wt in pts)


# t(0.975, df) for df = 2..20.
T = [4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
     2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]


def quantile(k, n):
    """q(K), and how often t(0.975, K-1)*s holds mu."""
    pts = points(k, n)
    mass = sum(wt for *_, wt in pts)
    t_holds = coverage(T[k - 3], pts, k) / mass
    lo, hi = 1.0, 6.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if coverage(mid, pts, k) / mass < 0.95:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2, t_holds


def main():
    args = sys.argv[1:]
    n = 400
    if args[:1] == ["--grid"]:
        n, args = int(args[1]), args[2:]
    for k in [int(a) for a in args] or range(3, 22):
        if not 3 <= k <= 21:
            sys.exit("K is 3 to 21")
        q, t_holds = quantile(k, n)
        print(f"{k:3} {q:.5f}   t(0.975, {k - 1}) holds {t_holds * 100:.1f}%", flush=True)


if __name__ == "__main__":
    main()
