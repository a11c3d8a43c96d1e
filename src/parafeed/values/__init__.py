"""Values: what elements are made of and how they are described (nested structures and specs, dtypes, sparse and
ragged tensors, optionals, the common supertype of specs), and the array work on them (stacking batches, recycled
memory). The lowest layer above ``parafeed.errors``: it imports nothing else of parafeed."""
