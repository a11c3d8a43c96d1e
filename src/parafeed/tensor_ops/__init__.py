"""TensorFlow-style operations on NumPy that map functions call, one module per family, each checked against
TensorFlow: ``image`` (``pf.image``), ``ragged`` (``pf.ragged``). They use only ``values`` and ``errors``."""
