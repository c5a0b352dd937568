"""oracleboost: boosting where every booster talks to weak learners through an Oracle protocol."""

__version__ = "0.1.0"
