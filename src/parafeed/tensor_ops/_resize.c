/* TensorFlow's ResizeBilinear in C: the same float32 arithmetic as kernels.linear (and TensorFlow's CPU kernel),
   per output value  top = tl + (tr - tl) * fx;  bottom = bl + (br - bl) * fx;  out = top + (bottom - top) * fy,
   each step rounded to float32 (compiled with -ffp-contract=off: no fused multiply-add), so results are bit-exact
   and the NumPy version stays the reference. Inputs: a C-contiguous (n, h, w, c) uint8 or float32 buffer, the
   neighbours and fractions of each output row and column (kernels.linear_axis), a float32 output buffer. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define LERP_LOOP(T, CONVERT)                                                                                 \
    for (Py_ssize_t b = 0; b < n; b++) {                                                                      \
        const T *image = (const T *)src.buf + b * h * w * c;                                                   \
        float *o = (float *)dst.buf + b * oh * ow * c;                                                         \
        for (Py_ssize_t oy = 0; oy < oh; oy++) {                                                              \
            const T *lo = image + yl[oy] * w * c, *up = image + yu[oy] * w * c;                               \
            const float fy = fyv[oy];                                                                         \
            for (Py_ssize_t ox = 0; ox < ow; ox++) {                                                          \
                const Py_ssize_t l = xl[ox] * c, r = xu[ox] * c;                                              \
                const float fx = fxv[ox];                                                                     \
                for (Py_ssize_t k = 0; k < c; k++) {                                                          \
                    const float tl = CONVERT(lo[l + k]), tr = CONVERT(lo[r + k]);                             \
                    const float bl = CONVERT(up[l + k]), br = CONVERT(up[r + k]);                             \
                    const float top = tl + (tr - tl) * fx;                                                    \
                    const float bottom = bl + (br - bl) * fx;                                                 \
                    *o++ = top + (bottom - top) * fy;                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }

#define AS_IS(v) (v)
#define LOOKUP(v) table[v]

static PyObject *bilinear(PyObject *self, PyObject *args) {
    Py_buffer src, dst, ylb, yub, fyb, xlb, xub, fxb;
    Py_ssize_t n, h, w, c;
    int is_float;
    if (!PyArg_ParseTuple(args, "y*pnnnny*y*y*y*y*y*w*", &src, &is_float, &n, &h, &w, &c, &ylb, &yub, &fyb, &xlb,
                          &xub, &fxb, &dst))
        return NULL;
    const Py_ssize_t oh = fyb.len / (Py_ssize_t)sizeof(float), ow = fxb.len / (Py_ssize_t)sizeof(float);
    const int64_t *yl = ylb.buf, *yu = yub.buf, *xl = xlb.buf, *xu = xub.buf;
    const float *fyv = fyb.buf, *fxv = fxb.buf;
    const Py_ssize_t item = is_float ? (Py_ssize_t)sizeof(float) : 1;
    PyObject *result = NULL;
    if (src.len != n * h * w * c * item || dst.len != n * oh * ow * c * (Py_ssize_t)sizeof(float) ||
        ylb.len != oh * 8 || yub.len != oh * 8 || xlb.len != ow * 8 || xub.len != ow * 8) {
        PyErr_SetString(PyExc_ValueError, "bilinear: buffer sizes do not match the shapes");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (is_float) {
        LERP_LOOP(float, AS_IS)
    } else {
        float table[256]; /* uint8 to float32 by lookup: cheaper than a conversion per value, the same values */
        for (int v = 0; v < 256; v++)
            table[v] = (float)v;
        LERP_LOOP(uint8_t, LOOKUP)
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    PyBuffer_Release(&ylb);
    PyBuffer_Release(&yub);
    PyBuffer_Release(&fyb);
    PyBuffer_Release(&xlb);
    PyBuffer_Release(&xub);
    PyBuffer_Release(&fxb);
    return result;
}

static PyMethodDef methods[] = {
    {"bilinear", bilinear, METH_VARARGS,
     "bilinear(src, is_float, n, h, w, c, y_lower, y_upper, y_frac, x_lower, x_upper, x_frac, out) -> None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "parafeed.tensor_ops._resize", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__resize(void) { return PyModule_Create(&module); }
