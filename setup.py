"""Builds the optional C extension parafeed.io._native (TFRecord framing, tf.Example decoding).

Everything else is in pyproject.toml. If the extension cannot be compiled, parafeed installs without it and uses its
pure-Python paths, which give the same results more slowly.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "parafeed.io._native",
            ["src/parafeed/io/_native.c"],
            extra_compile_args=["-O3", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        ),
        Extension(  # bilinear resizing in TensorFlow's float32 arithmetic (pf.image.resize's default method)
            "parafeed.tensor_ops._resize",
            ["src/parafeed/tensor_ops/_resize.c"],
            extra_compile_args=["-O3", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        ),
        Extension(  # decode_and_crop_jpeg: libjpeg-turbo's partial decoding (the system's libjpeg-turbo, >= 1.5)
            "parafeed.tensor_ops._jpeg",
            ["src/parafeed/tensor_ops/_jpeg.c"],
            libraries=["jpeg"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-clobbered"],
            optional=True,
        ),
    ]
)
