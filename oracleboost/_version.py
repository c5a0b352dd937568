"""The library's version, as pyproject.toml gives it."""

__version__ = "0.1.0"
