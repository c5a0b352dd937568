"""Mirror-ascent boosting: MABoost and its variants (Naghibi & Pfister 2014)."""

from oracleboost.boosters.mirror.estimator import ArgmaxVote, MirrorBoostingClassifier

__all__ = ["MirrorBoostingClassifier", "ArgmaxVote"]
