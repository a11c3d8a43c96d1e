/* parafeed.tensor_ops._jpeg: decoding only a window of a JPEG, with libjpeg-turbo's partial decompression.
 *
 * decode_crop(data, y, x, height, width, channels, scale, fast_dct, fancy_upsampling, strict) -> (bytearray, (h, w, c))
 *
 * The rows above the window are skipped (jpeg_skip_scanlines: entropy-decoded, not transformed), the columns are
 * narrowed to the iMCU columns that cover the window (jpeg_crop_scanline), and the rows below are never read: the
 * same calls tf.image.decode_and_crop_jpeg makes, so the same pixels. The window is in the coordinates of the
 * output (after `scale`, 1, 2, 4 or 8). `channels` 0 keeps the file's (1 for grayscale, else 3), 1 or 3 converts.
 * With `strict`, a libjpeg warning (corrupt or truncated data) is an error. The GIL is released while decoding.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int strict;
    char message[JMSG_LENGTH_MAX];
} ErrorManager;

static void on_error(j_common_ptr cinfo) {
    ErrorManager *err = (ErrorManager *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level) {
    ErrorManager *err = (ErrorManager *)cinfo->err;
    if (level < 0 && err->strict) { /* a warning: corrupt data the decoder worked around */
        (*cinfo->err->format_message)(cinfo, err->message);
        longjmp(err->jump, 1);
    }
}

static PyObject *decode_crop(PyObject *self, PyObject *args) {
    Py_buffer data;
    int y, x, height, width, channels, scale, fast_dct, fancy, strict;
    if (!PyArg_ParseTuple(args, "y*iiiiiippp", &data, &y, &x, &height, &width, &channels, &scale, &fast_dct, &fancy,
                          &strict))
        return NULL;
    struct jpeg_decompress_struct cinfo;
    ErrorManager err;
    PyObject *volatile out = NULL;
    JSAMPLE *volatile row = NULL;
    PyThreadState *volatile released = NULL; /* the GIL is released (for the decoding itself) while set */
    PyObject *result = NULL;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    err.strict = strict;
    err.message[0] = 0;
    jpeg_create_decompress(&cinfo);
    if (setjmp(err.jump)) {
        if (released != NULL)
            PyEval_RestoreThread(released);
        released = NULL;
        PyErr_SetString(PyExc_ValueError, err.message[0] ? err.message : "not a valid JPEG");
        Py_CLEAR(out);
        goto done;
    }
    jpeg_mem_src(&cinfo, (const unsigned char *)data.buf, (unsigned long)data.len);
    jpeg_read_header(&cinfo, TRUE);
    if (channels == 0)
        channels = cinfo.num_components == 1 ? 1 : 3;
    cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)scale;
    cinfo.dct_method = fast_dct ? JDCT_IFAST : JDCT_ISLOW;
    cinfo.do_fancy_upsampling = fancy ? TRUE : FALSE;
    jpeg_calc_output_dimensions(&cinfo);
    if (y < 0 || x < 0 || height <= 0 || width <= 0 || (JDIMENSION)y + (JDIMENSION)height > cinfo.output_height ||
        (JDIMENSION)x + (JDIMENSION)width > cinfo.output_width) {
        result = Py_BuildValue("(O(II))", Py_None, cinfo.output_height, cinfo.output_width);
        goto done;
    }
    size_t stride = (size_t)width * (size_t)cinfo.output_components;
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(stride * (size_t)height));
    if (out == NULL)
        goto done;
    unsigned char *dst = (unsigned char *)PyByteArray_AS_STRING(out);
    released = PyEval_SaveThread();
    jpeg_start_decompress(&cinfo);
    JDIMENSION left = (JDIMENSION)x, span = (JDIMENSION)width;
    jpeg_crop_scanline(&cinfo, &left, &span); /* widens [x, x + width) to whole iMCU columns */
    size_t offset = ((size_t)x - left) * (size_t)cinfo.output_components;
    row = (JSAMPLE *)malloc((size_t)span * (size_t)cinfo.output_components);
    int ok = row != NULL;
    if (ok && y > 0 && jpeg_skip_scanlines(&cinfo, (JDIMENSION)y) != (JDIMENSION)y)
        ok = 0;
    for (int r = 0; ok && r < height; r++) {
        JSAMPROW rows[1] = {row};
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1)
            ok = 0;
        else
            memcpy(dst + (size_t)r * stride, row + offset, stride);
    }
    PyEval_RestoreThread(released);
    released = NULL;
    if (!ok) {
        Py_CLEAR(out);
        if (row == NULL)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, "the image data ended before the end of the crop window");
        goto done;
    }
    result = Py_BuildValue("(O(iii))", out, height, width, cinfo.output_components);
    Py_CLEAR(out);
done:
    jpeg_destroy_decompress(&cinfo);
    free(row);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"decode_crop", decode_crop, METH_VARARGS,
     "decode_crop(data, y, x, height, width, channels, scale, fast_dct, fancy_upsampling, strict) -> (bytearray, "
     "shape), or (None, (output height, output width)) when the window does not fit"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "parafeed.tensor_ops._jpeg", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__jpeg(void) { return PyModule_Create(&module); }
