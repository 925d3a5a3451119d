/* maptab._scorecore: two byte loops of maptab score, in C.
 *
 * An optional accelerator like maptab._solvercore (docs/scoring.md, "Performance"): each
 * function gives what the Python code named beside it gives, or None where that code is to
 * run instead, and maptab falls back to the Python code where this module is not built.
 * tests/test_scorecore.py compares the two.
 *
 *   utf8_valid   <->  whether bytes.decode("utf-8") succeeds (maptab.score.scorer._is_utf8)
 *   score_line   <->  json.dumps(row, ensure_ascii=False, allow_nan=False)
 *                     (maptab.score.workers.row_text)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ utf8_valid */

/* 1 when buf[0..n) is UTF-8 as CPython's strict decoder accepts it: no overlong forms, no
   surrogates (U+D800-U+DFFF), nothing above U+10FFFF, no truncated sequence */
static int
utf8_ok(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        /* ASCII runs, eight bytes at a time */
        while (i + 8 <= n) {
            unsigned long long w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t len;
        unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
        if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else
            return 0;
        if (i + len > n || s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (Py_ssize_t j = 2; j < len; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
        i += len;
    }
    return 1;
}

PyDoc_STRVAR(utf8_valid_doc,
             "utf8_valid(data) -> bool\n\n"
             "Whether the bytes-like `data` decodes as UTF-8 (strict), without decoding it.");

static PyObject *
scorecore_utf8_valid(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    int ok;
    Py_BEGIN_ALLOW_THREADS;
    ok = utf8_ok(view.buf, view.len);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* ------------------------------------------------------------------ score_line */

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int
out_reserve(Out *o, Py_ssize_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 1024;
    while (cap < o->len + more)
        cap *= 2;
    char *b = PyMem_Realloc(o->buf, (size_t)cap);
    if (!b) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = b;
    o->cap = cap;
    return 0;
}

static int
out_put(Out *o, const char *s, Py_ssize_t n)
{
    if (out_reserve(o, n) < 0)
        return -1;
    memcpy(o->buf + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define FALLBACK 1 /* returned by put_value: the Python encoder is to run */

/* one character below U+0080 as json's encode_basestring writes it: '"', '\\' and the
   control characters below U+0020 escaped (room for 6 bytes is reserved by the caller) */
static inline void
put_ascii(Out *o, Py_UCS4 c)
{
    static const char hex[] = "0123456789abcdef";
    char *p = o->buf + o->len;
    if (c >= 0x20 && c != '"' && c != '\\') {
        *p = (char)c;
        o->len += 1;
        return;
    }
    p[0] = '\\';
    switch (c) {
    case '"': p[1] = '"'; break;
    case '\\': p[1] = '\\'; break;
    case '\n': p[1] = 'n'; break;
    case '\r': p[1] = 'r'; break;
    case '\t': p[1] = 't'; break;
    case '\b': p[1] = 'b'; break;
    case '\f': p[1] = 'f'; break;
    default:
        p[1] = 'u';
        p[2] = '0';
        p[3] = '0';
        p[4] = hex[(c >> 4) & 0xF];
        p[5] = hex[c & 0xF];
        o->len += 6;
        return;
    }
    o->len += 2;
}

/* a str as json's encode_basestring writes it (ensure_ascii=False), as UTF-8: '"' and '\\'
   and the control characters below U+0020 escaped, everything else as it is; a lone
   surrogate (which the UTF-8 file could not hold) is left to Python */
static int
put_str(Out *o, PyObject *str)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(str);
    int kind = PyUnicode_KIND(str);
    const void *data = PyUnicode_DATA(str);
    if (out_reserve(o, 6 * n + 2) < 0) /* room for the longest form of every character */
        return -1;
    o->buf[o->len++] = '"';
    Py_ssize_t i = 0;
    if (PyUnicode_IS_ASCII(str)) { /* the part before the first escape, copied at once */
        const unsigned char *a = data;
        while (i < n && a[i] >= 0x20 && a[i] != '"' && a[i] != '\\')
            i++;
        memcpy(o->buf + o->len, a, (size_t)i);
        o->len += i;
    }
    for (; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        char *p = o->buf + o->len;
        if (c < 0x80) {
            put_ascii(o, c);
        } else if (c < 0x800) {
            p[0] = (char)(0xC0 | (c >> 6));
            p[1] = (char)(0x80 | (c & 0x3F));
            o->len += 2;
        } else if (c < 0x10000) {
            if (c >= 0xD800 && c <= 0xDFFF)
                return FALLBACK;
            p[0] = (char)(0xE0 | (c >> 12));
            p[1] = (char)(0x80 | ((c >> 6) & 0x3F));
            p[2] = (char)(0x80 | (c & 0x3F));
            o->len += 3;
        } else {
            p[0] = (char)(0xF0 | (c >> 18));
            p[1] = (char)(0x80 | ((c >> 12) & 0x3F));
            p[2] = (char)(0x80 | ((c >> 6) & 0x3F));
            p[3] = (char)(0x80 | (c & 0x3F));
            o->len += 4;
        }
    }
    o->buf[o->len++] = '"';
    return 0;
}

/* int.__repr__ of an exact int too large for a long long, as json writes it */
static int
put_repr(Out *o, PyObject *obj)
{
    PyObject *r = PyObject_Repr(obj);
    if (!r) { /* e.g. an int past sys.get_int_max_str_digits(): json raises that itself */
        PyErr_Clear();
        return FALLBACK;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(r, &n);
    int rc = s ? out_put(o, s, n) : -1;
    Py_DECREF(r);
    return rc;
}

static int put_value(Out *o, PyObject *v, int depth);

static int
put_dict(Out *o, PyObject *d, int depth)
{
    if (out_put(o, "{", 1) < 0)
        return -1;
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k))
            return FALLBACK; /* json converts other keys (ints, floats, ...) its own way */
        if (i++ && out_put(o, ", ", 2) < 0)
            return -1;
        int rc = put_str(o, k);
        if (rc)
            return rc;
        if (out_put(o, ": ", 2) < 0)
            return -1;
        if ((rc = put_value(o, v, depth + 1)))
            return rc;
    }
    return out_put(o, "}", 1);
}

static int
put_value(Out *o, PyObject *v, int depth)
{
    if (depth > 32)
        return FALLBACK;
    if (v == Py_None)
        return out_put(o, "null", 4);
    if (v == Py_True)
        return out_put(o, "true", 4);
    if (v == Py_False)
        return out_put(o, "false", 5);
    if (PyUnicode_CheckExact(v))
        return put_str(o, v);
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return put_repr(o, v);
        }
        char num[24];
        int k = snprintf(num, sizeof num, "%lld", x); /* int.__repr__ of a small int */
        return out_put(o, num, k);
    }
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!isfinite(x))
            return FALLBACK; /* allow_nan=False: json raises, row_text cleans and retries */
        char *s = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!s)
            return -1;
        int rc = out_put(o, s, (Py_ssize_t)strlen(s));
        PyMem_Free(s);
        return rc;
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        PyObject *seq = v;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (out_put(o, "[", 1) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i && out_put(o, ", ", 2) < 0)
                return -1;
            /* a list's length may not change here: nothing in this loop runs Python code */
            int rc = put_value(o, PySequence_Fast_GET_ITEM(seq, i), depth + 1);
            if (rc)
                return rc;
        }
        return out_put(o, "]", 1);
    }
    if (PyDict_CheckExact(v))
        return put_dict(o, v, depth);
    return FALLBACK; /* subclasses, other types: json's own rules */
}

PyDoc_STRVAR(score_line_doc,
             "score_line(row) -> str | None\n\n"
             "json.dumps(row, ensure_ascii=False, allow_nan=False) of a dict built of str keys\n"
             "and None, bool, int, float, str, list, tuple and dict values (exact types); None\n"
             "for anything else, a NaN or infinity, a lone surrogate or deep nesting (json is\n"
             "to encode it then).");

static PyObject *
scorecore_score_line(PyObject *module, PyObject *row)
{
    if (!PyDict_CheckExact(row))
        Py_RETURN_NONE;
    Out o = {NULL, 0, 0};
    int rc = put_dict(&o, row, 0);
    PyObject *out = NULL;
    if (rc == 0)
        out = PyUnicode_DecodeUTF8(o.buf, o.len, "strict");
    else if (rc == FALLBACK) {
        out = Py_None;
        Py_INCREF(out);
    }
    PyMem_Free(o.buf);
    return out;
}

static PyMethodDef scorecore_methods[] = {
    {"utf8_valid", scorecore_utf8_valid, METH_O, utf8_valid_doc},
    {"score_line", scorecore_score_line, METH_O, score_line_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scorecore_module = {
    PyModuleDef_HEAD_INIT, "maptab._scorecore",
    "Byte loops of maptab score in C (an optional accelerator).", -1, scorecore_methods,
};

PyMODINIT_FUNC
PyInit__scorecore(void)
{
    return PyModule_Create(&scorecore_module);
}
