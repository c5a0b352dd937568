"""Models out of the library: as LightGBM model text (``to_lightgbm``,
``lightgbm_model_string``) and as JSON (:mod:`oracleboost.model_json`)."""

from oracleboost.export.lightgbm import (
    ExportWarning,
    lightgbm_feature_names,
    lightgbm_model_string,
    to_lightgbm,
)

__all__ = ["to_lightgbm", "lightgbm_model_string", "lightgbm_feature_names", "ExportWarning"]
