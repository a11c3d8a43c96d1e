"""Transformation steps, one module per family; ``Dataset`` methods import them when first used."""
