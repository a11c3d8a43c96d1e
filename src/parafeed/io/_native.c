/* parafeed.io._native: the two inner loops that Python cannot run fast enough.
 *
 * frame_records  splits TFRecord framing (u64 length, masked CRC-32C of the length, data, masked CRC-32C of the
 *                data) out of a buffer. CRC-32C itself comes from a library: the caller passes its function (e.g.
 *                google_crc32c.value) and this code only calls it and applies TFRecord's mask.
 * decode_examples decodes the wire format of serialized tf.train.Example messages for a fixed set of feature keys,
 *                into per-key value counts and values. Anything unusual (duplicated sub-messages that protobuf
 *                would merge, groups, malformed bytes) makes it return None, and the caller then
 *                decodes that batch with protobuf, which defines the semantics.
 *
 * Both functions hold the GIL and keep no state between calls.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A new bytes object holding a copy of p[0:n]; large copies run without the GIL, so other threads go on meanwhile
 * (the caller keeps the source alive and unchanged: a buffer it holds a view of, or an immutable bytes object). */
#define COPY_WITHOUT_GIL (64 * 1024)
static PyObject *copy_bytes(const char *p, Py_ssize_t n) {
    if (n < COPY_WITHOUT_GIL) return PyBytes_FromStringAndSize(p, n);
    PyObject *b = PyBytes_FromStringAndSize(NULL, n);
    if (b == NULL) return NULL;
    char *out = PyBytes_AS_STRING(b);
    Py_BEGIN_ALLOW_THREADS
    memcpy(out, p, (size_t)n);
    Py_END_ALLOW_THREADS
    return b;
}

/* ---------------------------------------------------------------------------------------------- frame_records */

static const uint32_t MASK_DELTA = 0xa282ead8u;

static uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + MASK_DELTA; }

static uint64_t load_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t load_u32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* crc_fn(obj) -> masked CRC in *out; returns -1 with a Python error set on failure. */
static int call_crc(PyObject *crc_fn, PyObject *obj, uint32_t *out) {
    PyObject *r = PyObject_CallOneArg(crc_fn, obj);
    if (r == NULL) return -1;
    unsigned long v = PyLong_AsUnsignedLongMask(r);
    Py_DECREF(r);
    if (v == (unsigned long)-1 && PyErr_Occurred()) return -1;
    *out = mask_crc((uint32_t)v);
    return 0;
}

enum { FRAME_OK = 0, FRAME_BAD_LENGTH_CRC = 1, FRAME_BAD_DATA_CRC = 2 };

/* frame_records(buf, pos, crc_fn_or_None, max_records) -> (records, pos, status, length)
 *
 * Splits complete records from buf[pos:]. Stops at the first incomplete record (status OK, pos at its start), after
 * max_records, or at a corrupt one: status BAD_LENGTH_CRC (pos at its header) or BAD_DATA_CRC (pos at its header,
 * length its data length; the caller may skip it since the framing is intact).
 */
static PyObject *frame_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, max_records;
    PyObject *crc_fn;
    if (!PyArg_ParseTuple(args, "y*nOn", &view, &pos, &crc_fn, &max_records)) return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t size = view.len;
    int verify = crc_fn != Py_None;
    int status = FRAME_OK;
    uint64_t bad_length = 0;
    int have_cached = 0; /* the last header's length and its checked CRC (runs of equal lengths are common) */
    uint64_t cached_length = 0;
    uint32_t cached_crc = 0;
    PyObject *records = PyList_New(0);
    if (records == NULL) goto fail;
    if (pos < 0 || pos > size) {
        PyErr_SetString(PyExc_ValueError, "frame_records: pos out of range");
        goto fail;
    }
    while (PyList_GET_SIZE(records) < max_records && size - pos >= 12) {
        const unsigned char *h = buf + pos;
        uint64_t length = load_u64(h);
        if (verify) {
            if (!have_cached || length != cached_length) {
                PyObject *lb = PyBytes_FromStringAndSize((const char *)h, 8);
                if (lb == NULL) goto fail;
                uint32_t c;
                int rc = call_crc(crc_fn, lb, &c);
                Py_DECREF(lb);
                if (rc < 0) goto fail;
                if (c != load_u32(h + 8)) {
                    status = FRAME_BAD_LENGTH_CRC;
                    break;
                }
                have_cached = 1;
                cached_length = length;
                cached_crc = c;
            } else if (cached_crc != load_u32(h + 8)) {
                status = FRAME_BAD_LENGTH_CRC;
                break;
            }
        }
        if (size - pos < 16 || length > (uint64_t)(size - pos - 16)) break; /* incomplete (at EOF: truncated) */
        PyObject *rec = copy_bytes((const char *)h + 12, (Py_ssize_t)length);
        if (rec == NULL) goto fail;
        if (verify) {
            uint32_t c;
            if (call_crc(crc_fn, rec, &c) < 0) {
                Py_DECREF(rec);
                goto fail;
            }
            if (c != load_u32(h + 12 + length)) {
                Py_DECREF(rec);
                status = FRAME_BAD_DATA_CRC;
                bad_length = length;
                break;
            }
        }
        int rc = PyList_Append(records, rec);
        Py_DECREF(rec);
        if (rc < 0) goto fail;
        pos += 16 + (Py_ssize_t)length;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NniK)", records, pos, status, (unsigned long long)bad_length);
fail:
    Py_XDECREF(records);
    PyBuffer_Release(&view);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- decode_examples */

typedef struct {
    const unsigned char *p, *end;
} Reader;

/* Reads a varint; returns 0 on success, -1 on malformed input. */
static int read_varint(Reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return -1;
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Reads a field tag; field numbers 0 and above 2^29 - 1 are malformed, as protobuf says. */
static int read_tag(Reader *r, int *field, int *wt) {
    uint64_t tag;
    if (read_varint(r, &tag) < 0 || tag > 0xffffffffu || (tag >> 3) == 0) return -1;
    *field = (int)(tag >> 3);
    *wt = (int)(tag & 7);
    return 0;
}

/* Reads a length-delimited payload into *sub. */
static int read_bytes(Reader *r, Reader *sub) {
    uint64_t n;
    if (read_varint(r, &n) < 0 || n > (uint64_t)(r->end - r->p)) return -1;
    sub->p = r->p;
    sub->end = r->p + n;
    r->p += n;
    return 0;
}

/* Skips a field of wire type wt; groups (3, 4) and unknown types are refused. */
static int skip_field(Reader *r, int wt) {
    uint64_t v;
    Reader sub;
    switch (wt) {
    case 0: return read_varint(r, &v);
    case 1:
        if (r->end - r->p < 8) return -1;
        r->p += 8;
        return 0;
    case 2: return read_bytes(r, &sub);
    case 5:
        if (r->end - r->p < 4) return -1;
        r->p += 4;
        return 0;
    default: return -1;
    }
}

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *d = PyMem_Realloc(b->data, cap);
    if (d == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

enum { KIND_BYTES = 0, KIND_FLOAT = 1, KIND_INT64 = 2 };
enum { DECODE_OK = 0, DECODE_SLOW = 1, DECODE_ERROR = -1 };

typedef struct {
    const char *key;
    Py_ssize_t key_len;
    int kind;
    Buf counts;      /* int64 per example: value count, -1 missing, -2 other list type */
    Buf numbers;     /* float32 or int64 values */
    PyObject *bytes; /* list of bytes values */
    Reader span;     /* the Feature of the current example, when present */
    int present;
} Column;

/* Walks one list message (the payload of bytes_list / float_list / int64_list) of the given kind, checking it as
 * protobuf would; with a column, appends its values there and counts them in *count. */
static int decode_list(int kind, Column *c, Reader *list, int64_t *count) {
    while (list->p < list->end) {
        int field, wt;
        if (read_tag(list, &field, &wt) < 0) return DECODE_SLOW;
        if (field != 1) {
            if (skip_field(list, wt) < 0) return DECODE_SLOW;
            continue;
        }
        if (kind == KIND_BYTES) {
            Reader s;
            if (wt != 2 || read_bytes(list, &s) < 0) return DECODE_SLOW;
            if (c != NULL) {
                PyObject *b = copy_bytes((const char *)s.p, s.end - s.p);
                if (b == NULL) return DECODE_ERROR;
                int rc = PyList_Append(c->bytes, b);
                Py_DECREF(b);
                if (rc < 0) return DECODE_ERROR;
                (*count)++;
            }
        } else if (kind == KIND_FLOAT) {
            const unsigned char *p;
            Py_ssize_t n;
            if (wt == 2) {
                Reader s;
                if (read_bytes(list, &s) < 0 || (s.end - s.p) % 4) return DECODE_SLOW;
                p = s.p;
                n = s.end - s.p;
            } else if (wt == 5) {
                if (list->end - list->p < 4) return DECODE_SLOW;
                p = list->p;
                n = 4;
                list->p += 4;
            } else {
                return DECODE_SLOW;
            }
            if (c != NULL) {
                if (buf_reserve(&c->numbers, n) < 0) return DECODE_ERROR;
                memcpy(c->numbers.data + c->numbers.len, p, n); /* little-endian float32, as on the wire */
                c->numbers.len += n;
                *count += n / 4;
            }
        } else {
            Reader s, one = *list;
            if (wt == 2) {
                if (read_bytes(list, &s) < 0) return DECODE_SLOW;
            } else if (wt == 0) {
                uint64_t v;
                if (read_varint(list, &v) < 0) return DECODE_SLOW;
                s.p = one.p; /* the single varint just read */
                s.end = list->p;
            } else {
                return DECODE_SLOW;
            }
            while (s.p < s.end) {
                uint64_t v;
                if (read_varint(&s, &v) < 0) return DECODE_SLOW;
                if (c != NULL) {
                    if (buf_reserve(&c->numbers, 8) < 0) return DECODE_ERROR;
                    int64_t x = (int64_t)v;
                    memcpy(c->numbers.data + c->numbers.len, &x, 8);
                    c->numbers.len += 8;
                    (*count)++;
                }
            }
        }
    }
    return DECODE_OK;
}

/* Splits a Feature message into its list kind (-1 when no list is set) and the list's payload. */
static int split_feature(Reader f, int *kind, Reader *list) {
    *kind = -1;
    while (f.p < f.end) {
        int field, wt;
        if (read_tag(&f, &field, &wt) < 0) return DECODE_SLOW;
        if (field >= 1 && field <= 3) {
            if (wt != 2 || *kind != -1) return DECODE_SLOW; /* oneof set twice: protobuf's merge rules apply */
            if (read_bytes(&f, list) < 0) return DECODE_SLOW;
            *kind = field - 1;
        } else if (skip_field(&f, wt) < 0) {
            return DECODE_SLOW;
        }
    }
    return DECODE_OK;
}

/* Decodes the Feature span of a column for one example, appending its count. */
static int decode_feature(Column *c) {
    int64_t count = -1; /* an absent or empty Feature counts as missing, as in tf.io.parse_example */
    if (c->present) {
        Reader list;
        int kind, rc = split_feature(c->span, &kind, &list);
        if (rc != DECODE_OK) return rc;
        if (kind != -1 && kind != c->kind) {
            count = -2;
        } else if (kind != -1) {
            count = 0;
            rc = decode_list(kind, c, &list, &count);
            if (rc != DECODE_OK) return rc;
        }
    }
    if (buf_reserve(&c->counts, 8) < 0) return DECODE_ERROR;
    memcpy(c->counts.data + c->counts.len, &count, 8);
    c->counts.len += 8;
    return DECODE_OK;
}

/* Whether p[0:n] is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF). */
static int valid_utf8(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        if (len == 0 || c > 0xf4 || i + len > n) return 0;
        for (int k = 1; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80) return 0;
        if (len == 3 && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0))) return 0;
        if (len == 4 && ((c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90))) return 0;
        i += len;
    }
    return 1;
}

/* Finds the Feature of every wanted key in one serialized Example. */
static int scan_example(Column *cols, Py_ssize_t ncols, Reader ex) {
    for (Py_ssize_t j = 0; j < ncols; j++) cols[j].present = 0;
    int seen_features = 0;
    while (ex.p < ex.end) {
        int field, wt;
        if (read_tag(&ex, &field, &wt) < 0) return DECODE_SLOW;
        if (field != 1) {
            if (skip_field(&ex, wt) < 0) return DECODE_SLOW;
            continue;
        }
        if (wt != 2 || seen_features++) return DECODE_SLOW; /* protobuf would merge two Features messages */
        Reader features;
        if (read_bytes(&ex, &features) < 0) return DECODE_SLOW;
        while (features.p < features.end) {
            if (read_tag(&features, &field, &wt) < 0) return DECODE_SLOW;
            if (field != 1) {
                if (skip_field(&features, wt) < 0) return DECODE_SLOW;
                continue;
            }
            if (wt != 2) return DECODE_SLOW; /* a known field with another wire type: protobuf decides */
            Reader entry, key = {0, 0}, value = {0, 0};
            int have_key = 0, have_value = 0;
            if (read_bytes(&features, &entry) < 0) return DECODE_SLOW;
            while (entry.p < entry.end) {
                if (read_tag(&entry, &field, &wt) < 0) return DECODE_SLOW;
                if (field == 1 || field == 2) {
                    if (wt != 2) return DECODE_SLOW;
                    if (field == 1 ? (have_key++ || read_bytes(&entry, &key) < 0)
                                   : (have_value++ || read_bytes(&entry, &value) < 0))
                        return DECODE_SLOW;
                } else {
                    return DECODE_SLOW; /* protobuf keeps such an entry out of the map, as an unknown field */
                }
            }
            if (!have_value) return DECODE_SLOW; /* an entry without a Feature */
            Py_ssize_t klen = key.end - key.p;
            if (!valid_utf8(key.p, klen)) return DECODE_SLOW; /* protobuf refuses non-UTF-8 string fields */
            /* every Feature must be well formed, wanted or not, or protobuf would refuse the whole Example */
            Reader list;
            int kind, rc = split_feature(value, &kind, &list);
            if (rc == DECODE_OK && kind != -1) rc = decode_list(kind, NULL, &list, NULL);
            if (rc != DECODE_OK) return rc;
            for (Py_ssize_t j = 0; j < ncols; j++) {
                if (cols[j].key_len == klen && memcmp(cols[j].key, key.p, klen) == 0) {
                    cols[j].span = value; /* a later entry for the same key wins, as in protobuf maps */
                    cols[j].present = 1;
                    break;
                }
            }
        }
    }
    return DECODE_OK;
}

/* decode_examples(serialized, keys, kinds) -> None | tuple of (counts: bytes, values: bytes | list) per key */
static PyObject *decode_examples(PyObject *self, PyObject *args) {
    PyObject *serialized, *keys;
    Py_buffer kinds;
    if (!PyArg_ParseTuple(args, "OO!y*", &serialized, &PyTuple_Type, &keys, &kinds)) return NULL;
    /* a tuple of its own holds the records alive while large values are copied without the GIL */
    PyObject *seq = PySequence_Tuple(serialized);
    if (seq == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_SetString(PyExc_TypeError, "decode_examples: serialized must be a sequence of bytes");
        PyBuffer_Release(&kinds);
        return NULL;
    }
    Py_ssize_t ncols = PyTuple_GET_SIZE(keys), n = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = NULL;
    Column *cols = PyMem_Calloc(ncols ? ncols : 1, sizeof(Column));
    if (cols == NULL || kinds.len != ncols) {
        if (cols != NULL) PyErr_SetString(PyExc_ValueError, "decode_examples: one kind per key");
        else PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyObject *k = PyTuple_GET_ITEM(keys, j);
        if (!PyBytes_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "decode_examples: keys must be bytes");
            goto done;
        }
        cols[j].key = PyBytes_AS_STRING(k);
        cols[j].key_len = PyBytes_GET_SIZE(k);
        cols[j].kind = ((const unsigned char *)kinds.buf)[j];
        if (cols[j].kind == KIND_BYTES && (cols[j].bytes = PyList_New(0)) == NULL) goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyBytes_Check(item)) {
            result = Py_None; /* not bytes: the Python path explains */
            Py_INCREF(result);
            goto done;
        }
        Reader ex = {(const unsigned char *)PyBytes_AS_STRING(item),
                     (const unsigned char *)PyBytes_AS_STRING(item) + PyBytes_GET_SIZE(item)};
        int rc = scan_example(cols, ncols, ex);
        for (Py_ssize_t j = 0; rc == DECODE_OK && j < ncols; j++) rc = decode_feature(&cols[j]);
        if (rc == DECODE_ERROR) goto done;
        if (rc == DECODE_SLOW) {
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
    }
    result = PyTuple_New(ncols);
    if (result == NULL) goto done;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyObject *counts = PyBytes_FromStringAndSize(cols[j].counts.data ? cols[j].counts.data : "", cols[j].counts.len);
        PyObject *values;
        if (cols[j].kind == KIND_BYTES) {
            values = cols[j].bytes;
            Py_INCREF(values);
        } else {
            values = PyBytes_FromStringAndSize(cols[j].numbers.data ? cols[j].numbers.data : "", cols[j].numbers.len);
        }
        if (counts == NULL || values == NULL) {
            Py_XDECREF(counts);
            Py_XDECREF(values);
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, j, PyTuple_Pack(2, counts, values));
        Py_DECREF(counts);
        Py_DECREF(values);
        if (PyTuple_GET_ITEM(result, j) == NULL) {
            Py_CLEAR(result);
            goto done;
        }
    }
done:
    if (cols != NULL) {
        for (Py_ssize_t j = 0; j < ncols; j++) {
            PyMem_Free(cols[j].counts.data);
            PyMem_Free(cols[j].numbers.data);
            Py_XDECREF(cols[j].bytes);
        }
        PyMem_Free(cols);
    }
    Py_DECREF(seq);
    PyBuffer_Release(&kinds);
    return result;
}

static PyMethodDef methods[] = {
    {"frame_records", frame_records, METH_VARARGS, "Split TFRecord framing out of a buffer (see module doc)."},
    {"decode_examples", decode_examples, METH_VARARGS, "Decode serialized tf.train.Example messages by key."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "parafeed.io._native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
