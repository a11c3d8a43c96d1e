"""Adapters that feed parafeed pipelines to TensorFlow and PyTorch; each imports its framework only when used."""
