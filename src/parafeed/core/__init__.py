"""The core: the ``Dataset`` node and its graph, iterators and the run context, user functions, options, argument
checks, checkpoint positions and run statistics. It imports only ``values``, ``tensor_ops`` and ``errors``; the
``Dataset`` facade (``dataset.py``, ``constructors.py``) imports the step and source modules when a method is first
called, the one declared exception to the layer rule (docs/design.md)."""
