"""scripts/analysis/projected_bound.py: the emulated bounds are bounds, and the projected copy's
long vectors keep the centred dot product."""
import numpy as np

from scripts.analysis import projected_bound as pb


def aniso(rows, dim, c, seed):
    """x = a u + z with mean pairwise cosine about c (docs/data.md, `aniso:C`)."""
    rng = np.random.default_rng(seed)
    u = np.where(rng.random(dim) < 0.5, -1.0, 1.0) / np.sqrt(dim)
    a = np.sqrt(c * dim / (1 - c))
    return a * u[None, :] + rng.standard_normal((rows, dim))


def centred(x, queries):
    """Unit rows, their mean mu, the centred rows, the first rows as queries and their w."""
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    mu = xn.mean(axis=0)
    q = xn[:queries]
    return xn, mu, xn - mu, q, (q @ mu) / (mu @ mu)


def test_codes_reconstruct_within_their_error():
    m = aniso(300, 40, 0.9, 1)
    s, c, err = pb.codes(m)
    assert np.abs(c).max() <= 127
    assert np.allclose(np.linalg.norm(m - s[:, None] * c, axis=1), err)
    st, ct, nu, rho = pb.tiled_codes(m)
    assert np.abs(ct).max() <= 127
    assert (nu >= np.linalg.norm(m - st[:, None] * ct, axis=1) - 1e-15).all()  # the tile's largest
    assert (rho >= np.linalg.norm(m, axis=1) - 1e-15).all()


def test_every_upper_bound_holds_per_row_and_tiled():
    xn, mu, y, q, w = centred(aniso(500, 48, 0.95, 2), 7)
    qres = q - w[:, None] * mu
    for tiled in (False, True):
        assert (pb.upper_bounds(xn, q, tiled) >= xn @ q.T - 1e-12).all()
        assert (pb.upper_bounds(y, qres, tiled) >= y @ qres.T - 1e-12).all()


def test_projected_long_vectors_keep_the_centred_dot():
    _, mu, y, q, w = centred(aniso(200, 32, 0.8, 3), 5)
    v = y @ mu
    long_rows = np.hstack([y, np.repeat(v[:, None], pb.EXTRA, axis=1)])
    long_queries = np.hstack([q - w[:, None] * mu, np.repeat((w / pb.EXTRA)[:, None], pb.EXTRA, axis=1)])
    assert np.allclose(long_rows @ long_queries.T, y @ q.T)


def test_candidates_hold_the_true_top_k_and_no_more_rows_than_the_model():
    x = aniso(3000, 32, 0.9, 4)
    out = pb.family_counts(x, 20)
    assert set(out) == {t + n for t in ("", "tiled_") for n in ("plain", "centred", "projected52", "fp32_term")}
    for name, s in out.items():
        assert pb.K_BEST <= s["median"] <= s["p90"] <= s["max"] <= 3000, name
        assert 0.0 <= s["over_k_list"] <= 1.0


def test_room_lets_more_rows_through_and_is_named():
    x = aniso(3000, 32, 0.95, 5)
    plain = pb.family_counts(x, 20, ("projected52",), (True,))
    wide = pb.family_counts(x, 20, ("projected52",), (True,), room=1e-2)
    assert wide["tiled_projected52"]["median"] > plain["tiled_projected52"]["median"]
    xn, mu, y, q, w = centred(x[:200], 3)
    assert np.allclose(pb.upper_bounds(y, q, True, 0.5), pb.upper_bounds(y, q, True) + 0.5)
