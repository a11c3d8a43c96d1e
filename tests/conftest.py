"""Shared test set-up: quiet TensorFlow (when a test imports it) and a small shared element comparator."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
