"""Optimisation over the rows: step rules, line search, projections (simplex, capped
simplex, KL) and the passes over the rows that the boosters' rounds are made of."""
