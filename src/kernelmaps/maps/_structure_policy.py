"""``structure="auto"`` and ``output="auto"``: which projection structure and output form
:class:`~kernelmaps.RandomFourierFeatures` takes when the user leaves the choice to it — the
one place the rules are written.

The principal-axes QMC structure for an isotropic density drawn by quasi-Monte Carlo on data
of low effective dimension (it reads a sample of rows for their principal axes); orthogonal
random features (ORF) for other isotropic densities up to :data:`AUTO_MAX_FEATURES` inputs;
i.i.d. frequencies otherwise. Where the rows are read, that rule's choice is a proposal: the
candidates of :data:`AUTO_CANDIDATES` are scored on the sample, and one far better than the
proposal (:data:`AUTO_MARGIN`) replaces it. The output form: cos/sin pairs for an even number of
features, the cosine with a random offset for an odd one (so D is never rounded for pairs'
sake); for a structure in whole blocks, pairs rounded up to whole blocks where that adds at
most :data:`AUTO_PAIRS_MAX_ROUNDING` to D.
:class:`~kernelmaps.ArcCosineSampler`'s ``structure="auto"``: :func:`auto_arccos_structure`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = [
    "AUTO_CANDIDATES",
    "AUTO_IID_MAX_EFFECTIVE_DIMENSION",
    "AUTO_LOW_DIMENSIONAL_CANDIDATES",
    "AUTO_MARGIN",
    "AUTO_MAX_EFFECTIVE_DIMENSION",
    "AUTO_MAX_FEATURES",
    "AUTO_MIN_SAMPLE_ROWS",
    "AUTO_PAIRS_MAX_ROUNDING",
    "AUTO_SCORE_FREQUENCIES",
    "AUTO_SCORE_MARGIN_EXPONENT",
    "auto_arccos_structure",
    "auto_candidates",
    "auto_output",
    "auto_reads_data",
    "auto_structure",
    "choose_measured",
    "scoring_frequencies",
    "scoring_margin",
]

#: structure="auto" takes the principal-axes QMC structure when the data's effective
#: dimension (participation ratio of the covariance spectrum) is at most this, else ORF.
#: Measured (docs/random_features.md, cos/sin pairs, median-heuristic γ): principal beats ORF
#: on every set up to an effective dimension of 11.7 (standardised Fashion-MNIST: 0.84 / 0.94 /
#: 0.96× ORF's error at D = 256 / 1,024 / 4,096) and loses on digits at 18.3 (1.24× at D = 256).
AUTO_MAX_EFFECTIVE_DIMENSION = 15.0
#: Above this many features "auto" takes "iid": ORF and the principal axes cost O(d³) resp.
#: O(D′·d·256) to draw and O(d·D) memory, which stops paying at text-like widths.
AUTO_MAX_FEATURES = 4096
#: Where ``structure="auto"`` reads rows, it draws each of these structures (those that give
#: the width asked for) and keeps the one whose features approximate the kernel best on the
#: sample; on equal errors the first in this order. "structured" (SORF with Dirichlet block
#: shares and self-normalised radii) is scored where D′ is a whole number of its blocks: for
#: a smooth kernel it was the best explicit form in 5 of 10 cells (standardised iris, wine,
#: diabetes, breast_cancer and digits at the median heuristic × 0.1, D = 256 and 1,024, 16
#: seeds); scored, the default's own error over the best form's went from 0.90–1.30 to
#: 0.81–1.01 in the 30 cells of the three widths (docs/random_features.md, "The default
#: chooses its form").
#: Its draw is O(D′) numbers and its features O(D′ log d) per row. "fastfood" was never
#: below the best of these beyond noise in ``python -m benchmarks quality``.
#: Where the rule proposes "principal" every one of the others is kept somewhere, so none is
#: pruned there for speed (each costs the fit a draw, a feature block and a score: about
#: 1.3-2.5 ms of raw digits' 14-17 ms at D = 1,024): in 2,115 fits (the quality benchmark's
#: five sets standardised, raw and divided by their largest value; γ = median × 0.1, 1, 10,
#: "scale", 1/d; D = 256, 1,024, 4,096; 10 seeds) "structured" was kept 216 times,
#: "orthogonal" 49, "quadrature" 28, "iid" 86; leaving one out changed 28-216 choices, to a
#: draw with up to 3.0× ("orthogonal"), 3.7× ("quadrature"), 6.9× ("iid") and 94×
#: ("structured") the sample error of the one kept, and "quadrature" is the best fixed form
#: of the paper's digits cells (0.72-0.85× the next form), which the default takes there.
#: Only "iid" goes above an effective dimension where it was never kept
#: (:data:`AUTO_IID_MAX_EFFECTIVE_DIMENSION`).
AUTO_CANDIDATES = ("principal", "orthogonal", "quadrature", "structured", "iid")
#: The candidates scored only where the rule proposes "principal" (effective dimension at
#: most :data:`AUTO_MAX_EFFECTIVE_DIMENSION`): the QMC Gaussian coordinates, in the sample's
#: axes or the input's. Above it neither was ever kept: scored beside the others (4 seeds
#: each), standardised digits (d_eff 18, γ/10 and γ, D = 256 and 1,024, 32 fits) and
#: Gaussian rows of decaying spectrum (d = 64-784, d_eff 18-73, the same γ and D, 80 fits),
#: the better of their two errors was 0.91-5.6× the best other candidate's, never below it
#: by the margin; each costs a fit about one draw and a feature block (at d = 784,
#: D = 2,048: 18 ms for "iid", 30 ms for "principal" with its cross-fitted axes). Below it
#: "iid" can win (raw wine, d_eff 1.0: kept in 5 of 9 fits, some with a third of the
#: others' error).
AUTO_LOW_DIMENSIONAL_CANDIDATES = ("principal", "iid")
#: ... and "iid" only up to this effective dimension: its QMC coordinates in the input's own
#: axes were kept only on data of low effective dimension — in 101 of 5,571 principal-regime
#: fits (the quality benchmark's five sets standardised, raw and divided by their largest
#: value, γ = median × 0.1, 1, 10, "scale" and 1/d, 10 seeds; Gaussian rows of exponential
#: spectra, d = 16, 32, 64, d_eff 2-14, axis-aligned and rotated, 4-6 seeds; D = 256, 1,024,
#: 4,096), at d_eff 1.0-7.5 (raw and max-scaled wine, d_eff 1.0: 76 of them; axis-aligned
#: Gaussian rows up to 7.5), in none of the 1,935 above 10 (raw, max-scaled and standardised
#: digits, 12.3-14.9; Gaussian rows 10.0-14). A candidate that is not kept changes no choice
#: (the others' draws and scores are the same), so there the choices and maps are those of
#: scoring it (checked: all 4,707 fits of the sets above and the quality benchmark's 48
#: cells of those five sets and the paper's digits), without its draw — a 64-dimensional QMC
#: set mapped by Φ⁻¹ on raw digits — features and score: 1.3-2.5 ms of the default's
#: 14-16 ms fit there (D = 1,024, one thread).
AUTO_IID_MAX_EFFECTIVE_DIMENSION = 10.0
#: Fewer rows than this in the sample (a tiny fit): the static rule of :func:`auto_structure`
#: — 16 × 16 pairs cannot tell forms apart whose errors differ by tens of percent.
AUTO_MIN_SAMPLE_ROWS = 32
#: How much lower a candidate's sample error must be for ``"auto"`` to leave its static rule.
#: One draw scored on 128 rows predicts its error on other rows only roughly, so a margin
#: keeps near-ties on the rule; measured (mean of 8 seeds, error over the best explicit
#: structure's, standardised iris, wine, diabetes, breast_cancer and digits at the median
#: heuristic × 0.1 and × 1, D = 256 and 1,024: 20 cells), the worst cell was 1.04 with no
#: margin, 1.03 with 1.2 and 1.09 with 1.5 (which left ORF's 1.3× gains on smooth kernels
#: untaken); in the quadrature paper's setting on digits every margin from 1 to 2 gave
#: 0.91–0.95.
AUTO_MARGIN = 1.2
#: Where the rule proposes "orthogonal" (effective dimension above 15), the candidates are
#: scored at this many frequencies (or D′ where it is fewer), drawn on a random stream of
#: their own, and only the structure chosen is drawn at the full D′: scoring every candidate
#: at the full D′ cost the default's fit 155 ms where the chosen draw alone costs 62 ms
#: (5,000 × 784, D = 2,048, one thread: the QR factorisations of a 1,024 × 784 Gaussian
#: matrix for "orthogonal" and of "quadrature"'s simplices); at 128 of 784 each is a
#: 784 × 128 QR, 4.5 ms. Where the rule proposes "principal" the candidates are scored at
#: the full D′ (:func:`scoring_frequencies`): the QMC coordinates' error falls faster with
#: D′ than the others', so a narrower score misranks them — scored at 128 (or D′/2) and the
#: winner drawn afresh, the default's error over the best form went (20 seeds, median
#: heuristic × 0.1) from 1.02 to 1.51 (1.54) on breast_cancer at D = 1,024 and from 1.00 to
#: 1.83 (1.81) on wine at D = 4,096, "principal" no longer kept. Nor does a score at 128
#: screen out the candidates that need no full-width draw (280 fits of the sets above at
#: D = 1,024 and 4,096, 2 seeds): scaled to D′ as (128/D′)^a, keeping every candidate that
#: was kept at the full D′ needs a ≥ 1.5 (0.91 on standardised wine, γ/10, D = 1,024),
#: while on raw digits (γ = "scale", D = 1,024, "principal" kept in 10 of 10 fits) a screen
#: would need a ≤ 0.57 to leave one out; and compared at the same width the others score
#: below "principal" there (1.06-1.36× better at 128), so a like-for-like screen keeps them.
AUTO_SCORE_FREQUENCIES = 128
#: A candidate scored at ``n`` < D′ frequencies replaces the rule's "orthogonal" only if
#: below it by :data:`AUTO_MARGIN` × (D′/n) ** this: the rule's error falls faster with D′
#: (its radii are of dimension D′, Munkhoeva et al.'s "Gort" construction beyond d) —
#: standardised digits, median heuristic × 0.1: "structured" over "orthogonal" 0.97 at
#: D′ = 512 and 1.12 at 2,048. Measured (60 seeds, the default's error over the best form;
#: scoring at the full D′ with the winner drawn afresh: 1.00 ± 0.03 at D = 1,024, 1.04 ±
#: 0.04 at 4,096): at 128 frequencies with 0 → 0.97 ± 0.03 / 1.14 ± 0.04, 0.1 → 0.97 ±
#: 0.03 / 1.08 ± 0.04, 0.2 → 0.97 ± 0.03 / 1.01 ± 0.04.
AUTO_SCORE_MARGIN_EXPONENT = 0.2
#: ``output="auto"`` takes cos/sin pairs for a structure that rounds D′ up to whole blocks
#: wherever the pairs' whole blocks exceed ``n_components`` by at most this fraction. A bound
#: on the features (time, memory) added, not on the error, which more features only lower:
#: at d = 16, n_components = 1000, "structured" (10 seeds, Gaussian rows, γ = 1/d) gave
#: 0.137 as 1,008 offset cosines, 0.119 as 1,024 pair features and 0.121 as 992; on 784
#: inputs pairs would double D (2,048 for 1000), and the offset form is kept there.
AUTO_PAIRS_MAX_ROUNDING = 0.125


def auto_reads_data(sampling: str, isotropic: Callable[[], bool],
                    n_features: int | None = None) -> bool:
    """Whether ``structure="auto"`` reads a sample of rows (their principal axes).

    Parameters
    ----------
    sampling : str
        The frequencies' sampling; Monte Carlo (``"mc"``) never reads rows.
    isotropic : callable
        Whether the kernel's spectral density is isotropic; called only when the answer
        depends on it (the density of a kernel that has none raises).
    n_features : int, default=None
        The inputs' width; ``None`` where it is not known yet: the answer for a width up to
        :data:`AUTO_MAX_FEATURES` (the safe one — rows are then at hand).

    Returns
    -------
    reads : bool
    """
    if sampling == "mc" or (n_features is not None and n_features > AUTO_MAX_FEATURES):
        return False
    return isotropic()


def auto_structure(sampling: str, isotropic: bool, n_features: int,
                   effective_dimension: float | None = None) -> str:
    """The structure ``structure="auto"`` takes.

    Parameters
    ----------
    sampling : str
        The frequencies' sampling.
    isotropic : bool
        Whether the kernel's spectral density is isotropic.
    n_features : int
        The inputs' width.
    effective_dimension : float, default=None
        The participation ratio of the rows' covariance spectrum, where
        :func:`auto_reads_data` says the rows are read.

    Returns
    -------
    structure : {"principal", "orthogonal", "iid"}
    """
    if not auto_reads_data(sampling, lambda: isotropic, n_features):
        return "orthogonal" if isotropic and n_features <= AUTO_MAX_FEATURES else "iid"
    return "orthogonal" if effective_dimension > AUTO_MAX_EFFECTIVE_DIMENSION else "principal"


def auto_output(n_out_pairs: int, n_out_offset: int, blocks_of: int | None = None) -> str:
    r"""The output form ``output="auto"`` takes for ``n_components`` features.

    Per pair, with :math:`k` normalised to :math:`k(0) = 1` and D features from i.i.d.
    frequencies (Sutherland & Schneider, 2015, §2),

    .. math::

        D\operatorname{Var}_{\texttt{cos\_offset}} = 1 + \tfrac12 k(2\Delta) - k(\Delta)^2,
        \qquad
        D\operatorname{Var}_{\texttt{cos\_sin}} = 1 + k(2\Delta) - 2k(\Delta)^2,

    so pairs win wherever :math:`k(2\Delta) \le 2k(\Delta)^2`: always for the Gaussian
    (:math:`k(2\Delta) = k(\Delta)^4`), the Laplacians and the Matérns; only the Student
    kernel's far pairs (both variances ≈ 1/D there) break it. As :math:`k \to 1` the pairs'
    variance vanishes and the offset's tends to 1/(2D): the gap is widest for smooth
    kernels. Measured (``python -m benchmarks quality``, docs/random_features.md): with the
    structure "auto" takes, the pairs were at or below the offset form in every cell but
    within-noise ties at mean kernel value ≤ 0.1, by up to 27× at γ/10. The pairs are taken
    wherever they give no more features than the offset form after the structure's
    rounding — an odd ``n_components`` would need one feature more as pairs, and the offset
    form keeps D exact there — and, for a structure that rounds D′ up to whole blocks
    (``blocks_of``: the ``n_components`` asked), wherever the pairs' whole blocks exceed
    ``n_components`` by at most :data:`AUTO_PAIRS_MAX_ROUNDING`: ``structure="structured"``
    with ``n_components=1000`` on 16 features gives 1,024 pairs' features, not 1,008 offset
    cosines, while on 784 features it gives 1,024 offset cosines, not 2 × 1,024 pairs
    (twice the features, time and memory asked for).

    Parameters
    ----------
    n_out_pairs : int
        D as cos/sin pairs, after the structure's rounding.
    n_out_offset : int
        D as offset cosines, after the structure's rounding.
    blocks_of : int, default=None
        ``n_components``, for a structure that rounds D′ up to whole blocks; None for one
        that keeps D′.

    Returns
    -------
    output : {"cos_sin", "cos_offset"}
    """
    if n_out_pairs <= n_out_offset:
        return "cos_sin"
    rounded = blocks_of is not None and n_out_pairs <= (1 + AUTO_PAIRS_MAX_ROUNDING) * blocks_of
    return "cos_sin" if rounded else "cos_offset"


def scoring_frequencies(n_frequencies: int, rule: str) -> int:
    """How many frequencies ``structure="auto"`` scores each candidate at.

    Parameters
    ----------
    n_frequencies : int
        D′ of the map to fit.
    rule : str
        What :func:`auto_structure` proposes.

    Returns
    -------
    int
        D′ where the rule proposes ``"principal"`` (its QMC coordinates' error falls faster
        with D′ than the other structures', so a narrower score misranks them), else
        ``min(D′, AUTO_SCORE_FREQUENCIES)``.
    """
    return n_frequencies if rule == "principal" else min(n_frequencies, AUTO_SCORE_FREQUENCIES)


def auto_candidates(isotropic: bool, registered: Mapping[str, bool],
                    width_of: Callable[[str], int], width: int, rule: str,
                    effective_dimension: float | None = None) -> tuple[str, ...]:
    """The structures ``structure="auto"`` measures on the sample: those of
    :data:`AUTO_CANDIDATES` that apply, give the width asked and, for
    :data:`AUTO_LOW_DIMENSIONAL_CANDIDATES`, only where the rule proposes "principal" —
    "iid" only up to an effective dimension of :data:`AUTO_IID_MAX_EFFECTIVE_DIMENSION`.

    Parameters
    ----------
    isotropic : bool
        Whether the kernel's spectral density is isotropic.
    registered : mapping of str to bool
        Each registered structure's ``isotropic_only``.
    width_of : callable
        ``width_of(name)``: the output width the structure gives (its rounding and the
        output form it takes).
    width : int
        The width ``"auto"`` promises (``n_features_out_for``): a candidate that rounds D
        further is left out.
    rule : str
        What :func:`auto_structure` proposes.
    effective_dimension : float, default=None
        The sample's participation ratio (None: not measured, "iid" not left out for it).

    Returns
    -------
    tuple of str
        In :data:`AUTO_CANDIDATES` order.
    """
    high = effective_dimension is not None and \
        effective_dimension > AUTO_IID_MAX_EFFECTIVE_DIMENSION
    return tuple(name for name in AUTO_CANDIDATES
                 if name in registered and (isotropic or not registered[name])
                 and (rule == "principal" or name not in AUTO_LOW_DIMENSIONAL_CANDIDATES)
                 and not (name == "iid" and high)
                 and width_of(name) == width)


def choose_measured(errors: Mapping[str, float], rule: str, margin: float = AUTO_MARGIN) -> str:
    r"""The static rule's structure, unless another candidate's sample error
    :math:`\|K - ZZ^\top\|_F/\|K\|_F` is below it by more than ``margin``.

    Parameters
    ----------
    errors : mapping of str to float
        Candidate → its relative error on the sample's scored half.
    rule : str
        What :func:`auto_structure` takes (a key of ``errors``).
    margin : float, default=AUTO_MARGIN
        :func:`scoring_margin` where the candidates were scored at a reduced width.

    Returns
    -------
    str
    """
    best = min(errors, key=errors.__getitem__)
    return best if errors[best] * margin < errors[rule] else rule


def scoring_margin(n_frequencies: int, n_scored: int) -> float:
    """The margin a candidate scored at ``n_scored`` of D′ frequencies must beat the rule by:
    :data:`AUTO_MARGIN` × (D′/n_scored) ** :data:`AUTO_SCORE_MARGIN_EXPONENT`.

    Parameters
    ----------
    n_frequencies : int
        D′ of the map to fit.
    n_scored : int
        The frequencies each candidate was scored at.

    Returns
    -------
    float
    """
    return AUTO_MARGIN * (n_frequencies / n_scored) ** AUTO_SCORE_MARGIN_EXPONENT


def auto_arccos_structure(n_features: int) -> str:
    """The structure ``structure="auto"`` takes for :class:`~kernelmaps.ArcCosineSampler`.

    The symmetric spherical rule with the exact radial moment (``"quadrature"``) up to
    :data:`AUTO_MAX_FEATURES` inputs, i.i.d. weights above (its Haar rotations cost O(d³)
    per d + 1 units; widths above it were not measured). Measured (``python -m benchmarks
    quality --kernels arccos``; the table is in the class docstring): the quadrature rule
    had the lowest error of the four structures in 35 of 36 cells over degrees 0, 1 and 2,
    and was 1.3 % above ``"orthogonal"`` (within the seeds' spread) in the 36th; the earlier
    default ``"iid"`` was 1.15 – 12.7× its error.

    Parameters
    ----------
    n_features : int
        The inputs' width d.

    Returns
    -------
    structure : {"quadrature", "iid"}
    """
    return "quadrature" if n_features <= AUTO_MAX_FEATURES else "iid"
