"""What every committed figure shares (docs/dashboard.md, "Plots that tell the truth"): colours
that are never reused within a figure, and a stamp naming the GPU, the commit and the date of
the run it was drawn from."""

# Okabe-Ito (colour-blind safe), then Tableau 10, then darker/lighter variants: 30 distinct.
_BASE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000",
         "#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#E15759", "#76B7B2", "#EDC948", "#FF9DA7",
         "#9C755F", "#BAB0AC", "#1B3A5C", "#7A4B00", "#00543F", "#6B2E55", "#7F2F00", "#2A6F8F",
         "#8C8C00", "#5A5A5A", "#A6CEE3", "#B2DF8A", "#FB9A99", "#CAB2D6"]


def distinct_colours(n):
    """n colours, no two alike; more than the palette holds is an error, not a silent repeat."""
    if n > len(_BASE):
        raise ValueError(f"{n} series in one figure: at most {len(_BASE)} distinct colours")
    return _BASE[:n]


def stamp_text(context):
    """'GPU · commit C · run date D' from a benchmark JSON's context."""
    gpu = context.get("gpu") or context.get("device") or "unknown GPU"
    commit = context.get("distancies_commit") or context.get("commit") or "unknown commit"
    date = str(context.get("date", "unknown date"))[:16].replace("T", " ")
    return f"{gpu} · commit {commit} · run {date}"


def stamp(fig, context, extra=""):
    """Writes the stamp at the bottom left of the figure (call before saving)."""
    text = stamp_text(context) + (f" · {extra}" if extra else "")
    fig.text(0.005, 0.005, text, fontsize=7, color="#444444", ha="left", va="bottom")
