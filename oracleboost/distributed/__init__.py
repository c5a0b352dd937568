"""Fits on a Dask cluster: the rows in partitions on the workers, the passes run where
the rows are, only statistics and the chosen hypothesis travel.  Imported when ``fit``
is given a dask array."""
