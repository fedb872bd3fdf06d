"""The names of the FGD paper's placement policies: as this project spells them, and as the paper does.

Apart from the policies themselves so that what only lists them (the command line's choices) needs no numpy.
"""

POLICY_NAMES = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
PAPER_NAMES = {
    "random": "Random",
    "dotprod": "DotProd",
    "gpuclustering": "GpuClustering",
    "gpupacking": "GpuPacking",
    "bestfit": "BestFit",
    "fgd": "FGD",
}

__all__ = ["PAPER_NAMES", "POLICY_NAMES"]
