"""Chapter 3: head subspaces at random init: low-rank heads, a full joint span, softly overlapping queries.

Setup. d_model = 512 split into h = 8 heads of d_k = d_model / h = 64. Every
head i has its own W_Q^i and W_K^i, each d_model x d_k with independent
Gaussian entries of standard deviation 1 / sqrt(d_model) (a fresh, untrained
layer).

S1  Each head scores with M_i = W_Q^i W_K^i^T, a d_model x d_model matrix. We
    take its numerical rank (singular values above max(shape) * eps * s_max).
S2  The 8 query projections side by side, [W_Q^1 ... W_Q^8] (d_model x h*d_k),
    and their numerical rank: do the heads together cover all of R^d_model?
S3  The query subspace of head i is the column space of W_Q^i. For each of the
    28 pairs of heads we take the cosines of the d_k principal angles between
    the two subspaces (singular values of Q_i^T Q_j, Q_i an orthonormal basis
    from a QR factorisation). Cosine 0 everywhere would be an orthogonal split
    (the essay's "8 non-interfering subspaces"); cosine 1 a shared direction.
    We report the mean cosine and mean squared cosine over all pairs and angles,
    the largest and smallest cosine, and the mean angle in degrees.
S4  What chance alone gives. For two independent uniformly random k-dimensional
    subspaces of R^n the squared cosines have exact mean k / n. Their limiting
    distribution as n grows with k / n = a fixed is Wachter's law (the MANOVA /
    Jacobi ensemble); for equal dimensions it lives on [0, 4a(1 - a)] with density
        sqrt(l (4a(1 - a) - l)) / (2 pi a l (1 - l)).
    We integrate it numerically (no sampling) for the expected mean cosine and the
    upper edge sqrt(4a(1 - a)), the asymptotic largest cosine. So the random-subspace
    reference is the known asymptotic, not a Monte Carlo estimate.

Run it: python experiments/heads.py [--seed N] [--json]
"""

from __future__ import annotations

import sys
from itertools import combinations

import harness
import numpy as np
from harness import Claim

NAME = "heads"

PARAMS = {
    "d_model": 512,
    "h": 8,
    "quad_points": 4000,  # quadrature points for Wachter's law
}


def numerical_rank(m: np.ndarray) -> int:
    """Singular values above the usual tolerance: max(shape) * eps * s_max."""
    s = np.linalg.svd(m, compute_uv=False)
    return int(np.sum(s > max(m.shape) * np.finfo(m.dtype).eps * s[0]))


def principal_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosines of the principal angles between the column spaces of a and b."""
    qa, _ = np.linalg.qr(a)
    qb, _ = np.linalg.qr(b)
    return np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0.0, 1.0)


def wachter_mean_cos(ratio: float, points: int) -> tuple[float, float]:
    """Asymptotic mean cosine and largest cosine for two random subspaces of dimension ratio * n.

    Squared cosines follow sqrt(l (top - l)) / (2 pi a l (1 - l)) on [0, top], top = 4a(1 - a).
    Substituting l = top (1 + cos phi) / 2 removes the square-root edges; midpoint rule in phi.
    """
    top = 4 * ratio * (1 - ratio)
    phi = (np.arange(points) + 0.5) * np.pi / points
    lam = top * (1 + np.cos(phi)) / 2
    # density * dl/dphi = (top/2 sin phi)^2 / (2 pi a l (1 - l))
    weight = (top / 2 * np.sin(phi)) ** 2 / (2 * np.pi * ratio * lam * (1 - lam)) * (np.pi / points)
    weight /= weight.sum()  # the quadrature's mass is 1 up to rounding; make it exact
    return float(np.sum(weight * np.sqrt(lam))), float(np.sqrt(top))


def run(seed, *, d_model, h, quad_points):
    rng = np.random.default_rng(seed)
    d_k = d_model // h
    w_q = [rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(h)]
    w_k = [rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(h)]
    out = {"config.d_model": d_model, "config.h": h, "config.d_k": d_k, "config.total_dim": h * d_k}

    # S1: each head's score matrix
    ranks = [numerical_rank(q @ k.T) for q, k in zip(w_q, w_k, strict=True)]
    out.update({"score.ranks": ranks, "score.rank": min(ranks)})

    # S2: all heads' queries together
    out["concat.rank"] = numerical_rank(np.concatenate(w_q, axis=1))

    # S3: principal angles between every pair of heads' query subspaces
    cos = np.array([principal_cosines(w_q[i], w_q[j]) for i, j in combinations(range(h), 2)])
    out.update({
        "angles.pairs": len(cos),
        "angles.mean_cos": float(cos.mean()),
        "angles.mean_cos2": float((cos**2).mean()),
        "angles.max_cos": float(cos.max()),
        "angles.min_cos": float(cos.min()),
        "angles.mean_deg": float(np.degrees(np.arccos(cos)).mean()),
    })

    # S4: what two independent random subspaces give
    mean_cos, edge = wachter_mean_cos(d_k / d_model, quad_points)
    out.update({"random.mean_cos": mean_cos, "random.mean_cos2": d_k / d_model, "random.edge_cos": edge})
    return out


CLAIMS = [
    Claim(
        id="score.rank",
        criterion="all(r == config.d_k for r in score.ranks) and config.d_k < config.d_model",
        text={"zh": "每个头的 512×512 打分矩阵 W_Q W_K^T 的秩都恰为 d_k = 64：单个头只能在 64 维里打分",
              "en": "every head's 512×512 score matrix W_Q W_K^T has rank exactly d_k = 64: one head scores "
                    "within 64 dimensions only"},
        shows=("score.rank", "score.ranks", "config.d_k", "config.d_model", "config.h"),
    ),
    Claim(
        id="concat.span",
        criterion="concat.rank == config.total_dim == config.d_model",
        text={"zh": "8 个头的 W_Q 拼在一起秩为 512：各头子空间线性无关，合起来覆盖整个 d_model 空间",
              "en": "the 8 heads' W_Q side by side have rank 512: the head subspaces are linearly independent "
                    "and together cover all of d_model"},
        shows=("concat.rank", "config.total_dim"),
    ),
    Claim(
        id="angles.soft",
        criterion="0.25 < angles.mean_cos < 0.35 and angles.max_cos < 0.75",
        text={"zh": "初始化时各头的查询子空间只是“软正交”：主角余弦均值明显大于 0（并非正交切分），"
                    "而最大余弦也远小于 1（没有两个头共享任何方向）",
              "en": "at init the heads' query subspaces are only softly orthogonal: the mean principal-angle "
                    "cosine is clearly above 0 (not an orthogonal split), and even the largest stays far "
                    "below 1 (no two heads share a direction)"},
        shows=("angles.mean_cos", "angles.max_cos", "angles.min_cos", "angles.mean_deg", "angles.pairs"),
    ),
    Claim(
        id="angles.random",
        criterion=("abs(angles.mean_cos - random.mean_cos) < 0.005"
                   " and abs(angles.mean_cos2 - random.mean_cos2) < 0.003"
                   " and angles.max_cos < random.edge_cos + 0.05"),
        text={"zh": "这种重叠恰好是两个独立随机子空间的水平：平均余弦与 Wachter 渐近值相差不到 0.005，"
                    "平均余弦平方与精确期望 d_k/d_model 相差不到 0.003——初始化时各头之间没有任何分工",
              "en": "the overlap is exactly that of independent random subspaces: the mean cosine is within "
                    "0.005 of Wachter's asymptotic value and the mean squared cosine within 0.003 of its exact "
                    "expectation d_k/d_model; at init nothing divides the work between heads"},
        shows=("random.mean_cos", "random.mean_cos2", "random.edge_cos", "angles.mean_cos2"),
    ),
]


if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
