"""Coordinate-descent boosting (Telgarsky 2012, 2013; Freund & Schapire's AdaBoost)."""

from oracleboost.boosters.coordinate.estimator import CoordinateBoostingClassifier

__all__ = ["CoordinateBoostingClassifier"]
