/* maptab._solvercore: the inner loops of maptab.solver's additive search, in C.
 *
 * An optional accelerator, like the C parts of the standard library's heapq or json: every
 * function here computes exactly what the Python method named beside it computes, the
 * same floating-point operations in the same order (built with -ffp-contract=off, so no
 * fused multiply-add changes a rounding), and maptab.solver falls back to that Python code
 * where this module is not built. tests/test_solvercore.py compares the two on random
 * networks and weights.
 *
 *   weigh               <->  maptab.costs.weigh(columns, weights).tolist() (as Floats)
 *   Graph.distances     <->  Solver._distances's search (Dijkstra over line states)
 *   Graph.tied_paths    <->  Solver._tied_simple_paths's backtrack
 *   assignments         <->  maptab.costs.optimal_assignments (line assignments of a route)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ Floats */

/* An immutable sequence of doubles: what weigh() returns, so that a weight vector's item
   and arc costs are one array, not a Python float object per item (the searches here read
   the array; Python code indexes it like a list, each item a float) */
typedef struct {
    PyObject_VAR_HEAD double v[1];
} Floats;

static PyTypeObject FloatsType;

#define Floats_Check(o) (Py_TYPE(o) == &FloatsType)

static Floats *
floats_new(Py_ssize_t n)
{
    return PyObject_NewVar(Floats, &FloatsType, n);
}

static PyObject *
Floats_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *items = NULL;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Floats() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "|O:Floats", &items))
        return NULL;
    if (!items)
        return (PyObject *)floats_new(0);
    PyObject *seq = PySequence_Fast(items, "Floats(): an iterable of floats");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Floats *f = floats_new(n);
    if (!f) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (x == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            Py_DECREF(f);
            return NULL;
        }
        f->v[i] = x;
    }
    Py_DECREF(seq);
    return (PyObject *)f;
}

static Py_ssize_t
Floats_len(Floats *f)
{
    return Py_SIZE(f);
}

static PyObject *
Floats_item(Floats *f, Py_ssize_t i)
{
    if (i < 0 || i >= Py_SIZE(f)) {
        PyErr_SetString(PyExc_IndexError, "Floats index out of range");
        return NULL;
    }
    return PyFloat_FromDouble(f->v[i]);
}

static PyObject *
Floats_subscript(Floats *f, PyObject *key)
{
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        if (i < 0)
            i += Py_SIZE(f);
        return Floats_item(f, i);
    }
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0)
            return NULL;
        Py_ssize_t n = PySlice_AdjustIndices(Py_SIZE(f), &start, &stop, step);
        Floats *out = floats_new(n);
        if (!out)
            return NULL;
        for (Py_ssize_t i = 0, j = start; i < n; i++, j += step)
            out->v[i] = f->v[j];
        return (PyObject *)out;
    }
    PyErr_Format(PyExc_TypeError, "Floats indices must be integers or slices, not %.200s",
                 Py_TYPE(key)->tp_name);
    return NULL;
}

static PyObject *
Floats_tolist(Floats *f, PyObject *unused)
{
    PyObject *out = PyList_New(Py_SIZE(f));
    if (!out)
        return NULL;
    for (Py_ssize_t i = 0; i < Py_SIZE(f); i++) {
        PyObject *x = PyFloat_FromDouble(f->v[i]);
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* equal to another Floats, a list or a tuple with the same length and equal items (each
   compared as Python compares a float with it) */
static PyObject *
Floats_richcompare(Floats *f, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) ||
        !(Floats_Check(other) || PyList_Check(other) || PyTuple_Check(other)))
        Py_RETURN_NOTIMPLEMENTED;
    int same = 1;
    if (Floats_Check(other)) {
        Floats *g = (Floats *)other;
        same = Py_SIZE(f) == Py_SIZE(g);
        for (Py_ssize_t i = 0; same && i < Py_SIZE(f); i++)
            same = f->v[i] == g->v[i];
    } else {
        PyObject *seq = PySequence_Fast(other, "");
        if (!seq)
            return NULL;
        same = PySequence_Fast_GET_SIZE(seq) == Py_SIZE(f);
        for (Py_ssize_t i = 0; same && i < Py_SIZE(f); i++) {
            PyObject *x = PyFloat_FromDouble(f->v[i]);
            if (!x) {
                Py_DECREF(seq);
                return NULL;
            }
            same = PyObject_RichCompareBool(x, PySequence_Fast_GET_ITEM(seq, i), Py_EQ);
            Py_DECREF(x);
            if (same < 0) {
                Py_DECREF(seq);
                return NULL;
            }
        }
        Py_DECREF(seq);
    }
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static PyObject *
Floats_repr(Floats *f)
{
    PyObject *list = Floats_tolist(f, NULL);
    if (!list)
        return NULL;
    PyObject *out = PyUnicode_FromFormat("Floats(%R)", list);
    Py_DECREF(list);
    return out;
}

static PyObject *
Floats_reduce(Floats *f, PyObject *unused)
{
    PyObject *list = Floats_tolist(f, NULL);
    if (!list)
        return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)&FloatsType, list);
}

static PyMethodDef Floats_methods[] = {
    {"tolist", (PyCFunction)Floats_tolist, METH_NOARGS, "The items as a list of floats."},
    {"__reduce__", (PyCFunction)Floats_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Floats_as_sequence = {
    .sq_length = (lenfunc)Floats_len,
    .sq_item = (ssizeargfunc)Floats_item,
};

static PyMappingMethods Floats_as_mapping = {
    .mp_length = (lenfunc)Floats_len,
    .mp_subscript = (binaryfunc)Floats_subscript,
};

PyDoc_STRVAR(Floats_doc,
             "Floats(iterable=()): an immutable sequence of floats stored as one C array\n"
             "(what weigh() returns); compares equal to a list or tuple of equal floats.");

static PyTypeObject FloatsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "maptab._solvercore.Floats",
    .tp_basicsize = offsetof(Floats, v),
    .tp_itemsize = sizeof(double),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Floats_doc,
    .tp_new = Floats_tp_new,
    .tp_repr = (reprfunc)Floats_repr,
    .tp_as_sequence = &Floats_as_sequence,
    .tp_as_mapping = &Floats_as_mapping,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = (richcmpfunc)Floats_richcompare,
    .tp_iter = PySeqIter_New,
    .tp_methods = Floats_methods,
};

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_states;
    Py_ssize_t n_stations;
    Py_ssize_t n_arcs;
    int *station_of; /* n_states */
    int *fwd_start;  /* n_states + 1: arcs out of x are fwd_end[fwd_start[x] .. fwd_start[x+1]) */
    int *fwd_end;
    int *fwd_arc;
    int *rev_start; /* arcs into x, in the order of the reverse rows */
    int *rev_end;
    int *rev_arc;
    /* scratch, reused by every call (a Graph is used by one thread at a time: the GIL is
       held throughout) */
    double *cost; /* n_arcs: the arc costs of the call */
    double *dist;
    double *heap_d;
    int *heap_x;
    Py_ssize_t heap_cap;
    char *on_seq;     /* n_stations: the station is on the path being built */
    int *seq;         /* n_stations + 1 */
    unsigned *stamp;  /* n_states: de-duplication marks */
    unsigned *gstamp; /* n_stations: grouping marks */
    unsigned gen;
    int *arena; /* state lists of the backtrack's frames */
    Py_ssize_t arena_cap;
} Graph;

static void
graph_free_buffers(Graph *g)
{
    free(g->station_of);
    free(g->fwd_start);
    free(g->fwd_end);
    free(g->fwd_arc);
    free(g->rev_start);
    free(g->rev_end);
    free(g->rev_arc);
    free(g->cost);
    free(g->dist);
    free(g->heap_d);
    free(g->heap_x);
    free(g->on_seq);
    free(g->seq);
    free(g->stamp);
    free(g->gstamp);
    free(g->arena);
}

static void
Graph_dealloc(Graph *g)
{
    graph_free_buffers(g);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

/* rows: a list (one per state) of lists of (end, arc) tuples, as Solver keeps them */
static int
read_rows(PyObject *rows, Py_ssize_t n_states, Py_ssize_t n_arcs, int **start, int **end,
          int **arc)
{
    if (!PyList_Check(rows) || PyList_GET_SIZE(rows) != n_states) {
        PyErr_SetString(PyExc_ValueError, "rows: a list with one list per state");
        return -1;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t x = 0; x < n_states; x++) {
        PyObject *row = PyList_GET_ITEM(rows, x);
        if (!PyList_Check(row)) {
            PyErr_SetString(PyExc_ValueError, "rows: each row is a list");
            return -1;
        }
        total += PyList_GET_SIZE(row);
    }
    *start = malloc(sizeof(int) * (n_states + 1));
    *end = malloc(sizeof(int) * (total ? total : 1));
    *arc = malloc(sizeof(int) * (total ? total : 1));
    if (!*start || !*end || !*arc) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t x = 0; x < n_states; x++) {
        PyObject *row = PyList_GET_ITEM(rows, x);
        (*start)[x] = (int)k;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(row); j++) {
            PyObject *pair = PyList_GET_ITEM(row, j);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_ValueError, "rows: (end, arc) pairs");
                return -1;
            }
            long y = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0));
            long i = PyLong_AsLong(PyTuple_GET_ITEM(pair, 1));
            if (PyErr_Occurred())
                return -1;
            if (y < 0 || y >= n_states || i < 0 || i >= n_arcs) {
                PyErr_SetString(PyExc_ValueError, "rows: an end or arc out of range");
                return -1;
            }
            (*end)[k] = (int)y;
            (*arc)[k] = (int)i;
            k++;
        }
    }
    (*start)[n_states] = (int)k;
    return 0;
}

static int
Graph_init(Graph *g, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"station_of", "n_stations", "n_arcs", "fwd_rows", "rev_rows", NULL};
    PyObject *station_of, *fwd, *rev;
    Py_ssize_t n_stations, n_arcs;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnnOO", kwlist, &station_of, &n_stations,
                                     &n_arcs, &fwd, &rev))
        return -1;
    graph_free_buffers(g);
    memset(&g->n_states, 0, sizeof(Graph) - offsetof(Graph, n_states));
    if (!PyList_Check(station_of) || n_stations < 0 || n_arcs < 0 ||
        PyList_GET_SIZE(station_of) > INT_MAX / 4 || n_arcs > INT_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "station_of: a list of station numbers");
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(station_of);
    g->n_states = n;
    g->n_stations = n_stations;
    g->n_arcs = n_arcs;
    g->station_of = malloc(sizeof(int) * (n ? n : 1));
    if (!g->station_of) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t x = 0; x < n; x++) {
        long u = PyLong_AsLong(PyList_GET_ITEM(station_of, x));
        if (PyErr_Occurred())
            return -1;
        if (u < 0 || u >= n_stations) {
            PyErr_SetString(PyExc_ValueError, "station_of: a station out of range");
            return -1;
        }
        g->station_of[x] = (int)u;
    }
    if (read_rows(fwd, n, n_arcs, &g->fwd_start, &g->fwd_end, &g->fwd_arc) < 0 ||
        read_rows(rev, n, n_arcs, &g->rev_start, &g->rev_end, &g->rev_arc) < 0)
        return -1;
    /* with costs >= 0 each arc is relaxed at most once; heap_push grows it all the same */
    Py_ssize_t pushes = g->fwd_start[n] + 1;
    g->heap_cap = pushes;
    g->cost = malloc(sizeof(double) * (n_arcs ? n_arcs : 1));
    g->dist = malloc(sizeof(double) * (n ? n : 1));
    g->heap_d = malloc(sizeof(double) * pushes);
    g->heap_x = malloc(sizeof(int) * pushes);
    g->on_seq = calloc(n_stations ? n_stations : 1, 1);
    g->seq = malloc(sizeof(int) * (n_stations + 1));
    g->stamp = calloc(n ? n : 1, sizeof(unsigned));
    g->gstamp = calloc(n_stations ? n_stations : 1, sizeof(unsigned));
    g->arena_cap = 1024;
    g->arena = malloc(sizeof(int) * g->arena_cap);
    if (!g->cost || !g->dist || !g->heap_d || !g->heap_x || !g->on_seq || !g->seq || !g->stamp ||
        !g->gstamp || !g->arena) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* a list of n floats (the solver's arc costs, its distances) into out; 1 when every value
   is finite and >= 0 (what the search needs; the solver has checked its costs so), 0 when
   one is not, -1 on error */
static int
read_floats(PyObject *list, Py_ssize_t n, double *out, const char *what)
{
    int usable = 1;
    if (Floats_Check(list) && Py_SIZE(list) == n) {
        const double *v = ((Floats *)list)->v;
        for (Py_ssize_t i = 0; i < n; i++) {
            out[i] = v[i];
            usable &= isfinite(v[i]) && v[i] >= 0;
        }
        return usable;
    }
    if (!PyList_Check(list) || PyList_GET_SIZE(list) != n) {
        PyErr_Format(PyExc_ValueError, "%s: a list (or Floats) of %zd floats", what, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyList_GET_ITEM(list, i);
        double v = PyFloat_CheckExact(f) ? PyFloat_AS_DOUBLE(f) : PyFloat_AsDouble(f);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        out[i] = v;
        usable &= isfinite(v) && v >= 0;
    }
    return usable;
}

/* ------------------------------------------------------------------ Dijkstra */

/* (d, x) pairs ordered as Python orders the tuples (d, x) of heapq (finite d only) */
static inline int
before(double d1, int x1, double d2, int x2)
{
    return d1 < d2 || (d1 == d2 && x1 < x2);
}

static inline int
heap_push(Graph *g, Py_ssize_t *size, double d, int x)
{
    if (*size >= g->heap_cap) {
        Py_ssize_t cap = 2 * g->heap_cap;
        double *hd = realloc(g->heap_d, sizeof(double) * cap);
        if (hd)
            g->heap_d = hd;
        int *hx = hd ? realloc(g->heap_x, sizeof(int) * cap) : NULL;
        if (!hx) {
            PyErr_NoMemory();
            return -1;
        }
        g->heap_x = hx;
        g->heap_cap = cap;
    }
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!before(d, x, g->heap_d[p], g->heap_x[p]))
            break;
        g->heap_d[i] = g->heap_d[p];
        g->heap_x[i] = g->heap_x[p];
        i = p;
    }
    g->heap_d[i] = d;
    g->heap_x[i] = x;
    return 0;
}

static inline void
heap_pop(Graph *g, Py_ssize_t *size, double *d, int *x)
{
    *d = g->heap_d[0];
    *x = g->heap_x[0];
    Py_ssize_t n = --(*size);
    if (n == 0)
        return;
    double ld = g->heap_d[n];
    int lx = g->heap_x[n];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(g->heap_d[c + 1], g->heap_x[c + 1], g->heap_d[c], g->heap_x[c]))
            c++;
        if (!before(g->heap_d[c], g->heap_x[c], ld, lx))
            break;
        g->heap_d[i] = g->heap_d[c];
        g->heap_x[i] = g->heap_x[c];
        i = c;
    }
    g->heap_d[i] = ld;
    g->heap_x[i] = lx;
}

static inline double
slack_of(double j, double rel_tol)
{
    return 3 * (rel_tol * fabs(j) + 1e-12); /* maptab.solver._slack */
}

PyDoc_STRVAR(distances_doc,
             "distances(cost, s, stop, dest, rel_tol) -> Floats | None\n\n"
             "Solver._distances's search from state s over the arc costs `cost` (Floats or a\n"
             "list of floats): the distance of every state, stop is the target station, or -1\n"
             "for the whole tree. None when a cost is not finite or is negative (the caller\n"
             "searches in Python).");

static PyObject *
Graph_distances(Graph *g, PyObject *args)
{
    PyObject *cost_obj;
    Py_ssize_t s, stop;
    double dest, rel_tol;
    if (!PyArg_ParseTuple(args, "Onndd", &cost_obj, &s, &stop, &dest, &rel_tol))
        return NULL;
    if (s < 0 || s >= g->n_stations || s >= g->n_states) {
        PyErr_SetString(PyExc_ValueError, "s: not a station");
        return NULL;
    }
    int usable = read_floats(cost_obj, g->n_arcs, g->cost, "cost");
    if (usable < 0)
        return NULL;
    if (!usable)
        Py_RETURN_NONE;
    const double *cost = g->cost;
    Py_ssize_t n = g->n_states;
    double *dist = g->dist;
    for (Py_ssize_t x = 0; x < n; x++)
        dist[x] = INFINITY;
    dist[s] = 0.0;
    Py_ssize_t size = 0;
    if (heap_push(g, &size, 0.0, (int)s) < 0)
        return NULL;
    double bound = INFINITY;
    while (size) {
        double d;
        int x;
        heap_pop(g, &size, &d, &x);
        if (d > dist[x])
            continue;
        if (d > bound)
            break;
        int u = g->station_of[x];
        if (u == stop) {
            if (bound == INFINITY)
                bound = d + slack_of(d + dest, rel_tol);
            continue;
        }
        if (u == s && x != s) /* re-entering the source: never on a simple path */
            continue;
        for (int a = g->fwd_start[x]; a < g->fwd_start[x + 1]; a++) {
            int y = g->fwd_end[a];
            double nd = d + cost[g->fwd_arc[a]];
            if (nd < dist[y]) {
                dist[y] = nd;
                if (nd <= bound && heap_push(g, &size, nd, y) < 0)
                    return NULL;
            }
        }
    }
    Floats *out = floats_new(n);
    if (!out)
        return NULL;
    memcpy(out->v, dist, sizeof(double) * (size_t)n);
    return (PyObject *)out;
}

/* ------------------------------------------------------------------ tied paths */

typedef struct {
    Graph *g;
    const double *dist;
    const double *cost;
    double slack;
    int s;
    Py_ssize_t cap;
    long long budget;
    Py_ssize_t seqlen;
    Py_ssize_t top; /* arena use */
    PyObject *paths;
} Back;

static int
arena_reserve(Back *b, Py_ssize_t more)
{
    Graph *g = b->g;
    if (b->top + more <= g->arena_cap)
        return 0;
    Py_ssize_t cap = g->arena_cap;
    while (cap < b->top + more)
        cap *= 2;
    int *grown = realloc(g->arena, sizeof(int) * cap);
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    g->arena = grown;
    g->arena_cap = cap;
    return 0;
}

/* a fresh mark for stamp[] and gstamp[]: a value no entry holds (both cleared when the
   counter wraps) */
static unsigned
next_gen(Graph *g)
{
    if (++g->gen == 0) {
        memset(g->stamp, 0, sizeof(unsigned) * g->n_states);
        memset(g->gstamp, 0, sizeof(unsigned) * g->n_stations);
        g->gen = 1;
    }
    return g->gen;
}

/* copy arena[from .. from+len) to the top, without repeats (first occurrences, in order);
   returns the new list's length (its start is the old top) or -1 */
static Py_ssize_t
push_unique(Back *b, Py_ssize_t from, Py_ssize_t len)
{
    if (arena_reserve(b, len) < 0)
        return -1;
    Graph *g = b->g;
    unsigned gen = next_gen(g);
    Py_ssize_t k = 0, start = b->top;
    for (Py_ssize_t j = 0; j < len; j++) {
        int y = g->arena[from + j];
        if (g->stamp[y] != gen) {
            g->stamp[y] = gen;
            g->arena[start + k++] = y;
        }
    }
    b->top += k;
    return k;
}

static int
add_path(Back *b)
{
    Graph *g = b->g;
    PyObject *path = PyList_New(b->seqlen + 1);
    if (!path)
        return -1;
    PyObject *v = PyLong_FromLong(b->s);
    if (!v) {
        Py_DECREF(path);
        return -1;
    }
    PyList_SET_ITEM(path, 0, v);
    for (Py_ssize_t j = 0; j < b->seqlen; j++) {
        v = PyLong_FromLong(g->seq[b->seqlen - 1 - j]);
        if (!v) {
            Py_DECREF(path);
            return -1;
        }
        PyList_SET_ITEM(path, j + 1, v);
    }
    int rc = PyList_Append(b->paths, path);
    Py_DECREF(path);
    return rc;
}

/* Solver._tied_simple_paths's back(states, seq): 1 (go on), 0 (stop: incomplete), -1 (error).
   states are arena[st .. st+n). */
static int
back(Back *b, Py_ssize_t st, Py_ssize_t n)
{
    Graph *g = b->g;
    const double *dist = b->dist, *cost = b->cost;
    Py_ssize_t depth = b->seqlen, base = b->top;
    int rc = 1;
    for (;;) {
        if (--b->budget < 0) {
            rc = 0;
            goto done;
        }
        /* the tight predecessor states, in arc order */
        Py_ssize_t tied = b->top, nt = 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            int x = g->arena[st + j];
            double dx = dist[x] + b->slack;
            Py_ssize_t deg = g->rev_start[x + 1] - g->rev_start[x];
            if (arena_reserve(b, nt + deg) < 0) {
                rc = -1;
                goto done;
            }
            for (int a = g->rev_start[x]; a < g->rev_start[x + 1]; a++) {
                int y = g->rev_end[a];
                if (dist[y] + cost[g->rev_arc[a]] <= dx)
                    g->arena[tied + nt++] = y;
            }
        }
        if (nt == 0)
            goto done; /* rc = 1 */
        b->top = tied + nt;
        int u = g->station_of[g->arena[tied]];
        int one_station = 1;
        for (Py_ssize_t j = 1; j < nt && one_station; j++)
            one_station = g->station_of[g->arena[tied + j]] == u;
        /* the groups: (station, start, length) triples, stations in order of first
           appearance, each group's states in order, repeats removed */
        Py_ssize_t groups, ngroups = 0;
        if (one_station) {
            if (u != b->s && !g->on_seq[u]) { /* one way back: follow it without recursing */
                g->seq[b->seqlen++] = u;
                g->on_seq[u] = 1;
                if (nt == 1) {
                    st = tied;
                    n = 1;
                }
                else {
                    Py_ssize_t k = push_unique(b, tied, nt);
                    if (k < 0) {
                        rc = -1;
                        goto done;
                    }
                    st = tied + nt;
                    n = k;
                }
                continue;
            }
            /* the source, or a station on the path: its one group, as it is */
            if (arena_reserve(b, 3) < 0) {
                rc = -1;
                goto done;
            }
            groups = b->top;
            g->arena[groups] = u;
            g->arena[groups + 1] = (int)tied;
            g->arena[groups + 2] = (int)nt;
            b->top += 3;
            ngroups = 1;
        }
        else {
            unsigned gen = next_gen(g);
            /* distinct stations in order, then each group's states */
            Py_ssize_t stations = b->top, ns = 0;
            if (arena_reserve(b, nt) < 0) {
                rc = -1;
                goto done;
            }
            for (Py_ssize_t j = 0; j < nt; j++) {
                int v = g->station_of[g->arena[tied + j]];
                if (g->gstamp[v] != gen) {
                    g->gstamp[v] = gen;
                    g->arena[stations + ns++] = v;
                }
            }
            b->top = stations + ns;
            if (arena_reserve(b, 3 * ns + nt) < 0) {
                rc = -1;
                goto done;
            }
            groups = b->top;
            b->top += 3 * ns;
            for (Py_ssize_t k = 0; k < ns; k++) {
                int v = g->arena[stations + k];
                Py_ssize_t from = b->top, len = 0;
                for (Py_ssize_t j = 0; j < nt; j++) {
                    int y = g->arena[tied + j];
                    if (g->station_of[y] == v)
                        g->arena[from + len++] = y;
                }
                b->top = from + len;
                g->arena[groups + 3 * k] = v;
                g->arena[groups + 3 * k + 1] = (int)from;
                g->arena[groups + 3 * k + 2] = (int)len;
            }
            ngroups = ns;
        }
        for (Py_ssize_t k = 0; k < ngroups; k++) {
            int v = g->arena[groups + 3 * k];
            Py_ssize_t from = g->arena[groups + 3 * k + 1], len = g->arena[groups + 3 * k + 2];
            if (v == b->s) {
                int has_s = 0;
                for (Py_ssize_t j = 0; j < len && !has_s; j++)
                    has_s = g->arena[from + j] == b->s;
                if (has_s) {
                    if (add_path(b) < 0) {
                        rc = -1;
                        goto done;
                    }
                    if (PyList_GET_SIZE(b->paths) > b->cap) {
                        rc = 0;
                        goto done;
                    }
                }
                continue;
            }
            if (g->on_seq[v])
                continue;
            g->seq[b->seqlen++] = v;
            g->on_seq[v] = 1;
            Py_ssize_t mark = b->top, sub_st = from, sub_n = len;
            if (len > 1) {
                sub_n = push_unique(b, from, len);
                if (sub_n < 0) {
                    rc = -1;
                    goto done;
                }
                sub_st = mark;
            }
            int going = back(b, sub_st, sub_n);
            b->top = mark;
            g->on_seq[g->seq[--b->seqlen]] = 0;
            if (going <= 0) {
                rc = going;
                goto done;
            }
        }
        goto done; /* rc = 1 */
    }
done:
    while (b->seqlen > depth) /* the stations followed without recursing */
        g->on_seq[g->seq[--b->seqlen]] = 0;
    b->top = base;
    return rc;
}

PyDoc_STRVAR(tied_paths_doc,
             "tied_paths(cost, dist, s, t, targets, slack, cap, max_expansions)\n"
             "-> (paths, complete)\n\n"
             "Solver._tied_simple_paths's backtrack from the target states `targets` (a\n"
             "list), over the arc costs `cost` and state distances `dist` (Floats or lists):\n"
             "every path found (at most cap + 1) and whether the search ran to its end.");

static PyObject *
Graph_tied_paths(Graph *g, PyObject *args)
{
    PyObject *cost_obj, *dist_obj, *targets;
    Py_ssize_t s, t, cap;
    double slack;
    long long budget;
    if (!PyArg_ParseTuple(args, "OOnnOdnL", &cost_obj, &dist_obj, &s, &t, &targets, &slack,
                          &cap, &budget))
        return NULL;
    if (s < 0 || s >= g->n_stations || t < 0 || t >= g->n_stations || s >= g->n_states) {
        PyErr_SetString(PyExc_ValueError, "s, t: not stations");
        return NULL;
    }
    if (!PyList_Check(targets)) {
        PyErr_SetString(PyExc_ValueError, "targets: a list of states");
        return NULL;
    }
    /* copies of the lists (distances() left its own array in g->dist) */
    if (read_floats(cost_obj, g->n_arcs, g->cost, "cost") < 0 ||
        read_floats(dist_obj, g->n_states, g->dist, "dist") < 0)
        return NULL;
    Back b = {g, g->dist, g->cost, slack, (int)s, cap, budget, 0, 0, NULL};
    Py_ssize_t nt = PyList_GET_SIZE(targets);
    if (arena_reserve(&b, nt) < 0)
        return NULL;
    for (Py_ssize_t j = 0; j < nt; j++) {
        long x = PyLong_AsLong(PyList_GET_ITEM(targets, j));
        if (PyErr_Occurred() || x < 0 || x >= g->n_states) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "targets: states");
            return NULL;
        }
        g->arena[j] = (int)x;
    }
    b.top = nt;
    b.paths = PyList_New(0);
    if (!b.paths)
        return NULL;
    g->seq[0] = (int)t;
    g->on_seq[t] = 1;
    b.seqlen = 1;
    int rc = back(&b, 0, nt);
    g->on_seq[t] = 0;
    if (rc < 0) {
        Py_DECREF(b.paths);
        return NULL;
    }
    return Py_BuildValue("(NO)", b.paths, rc ? Py_True : Py_False);
}

static PyMethodDef Graph_methods[] = {
    {"distances", (PyCFunction)Graph_distances, METH_VARARGS, distances_doc},
    {"tied_paths", (PyCFunction)Graph_tied_paths, METH_VARARGS, tied_paths_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Graph_doc,
             "Graph(station_of, n_stations, n_arcs, fwd_rows, rev_rows): a solver's state\n"
             "graph (maptab.solver.Solver), for the searches of this module.");

static PyTypeObject GraphType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "maptab._solvercore.Graph",
    .tp_basicsize = sizeof(Graph),
    .tp_dealloc = (destructor)Graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Graph_doc,
    .tp_methods = Graph_methods,
    .tp_init = (initproc)Graph_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ assignments */

/* builtins.sum of floats as this Python computes it (start: the int 0, so the first step
   is 0 + x): left to right, with Neumaier's compensation from 3.12 on */
typedef struct {
    double hi, lo;
    Py_ssize_t n;
} PySum;

static inline void
pysum_add(PySum *s, double x)
{
    if (s->n++ == 0) {
        s->hi = 0.0 + x;
        return;
    }
#if PY_VERSION_HEX >= 0x030C0000
    double t = s->hi + x;
    if (fabs(s->hi) >= fabs(x))
        s->lo += (s->hi - t) + x;
    else
        s->lo += (x - t) + s->hi;
    s->hi = t;
#else
    s->hi += x;
#endif
}

static inline double
pysum_value(const PySum *s)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (s->lo != 0.0 && isfinite(s->lo))
        return s->hi + s->lo;
#endif
    return s->hi; /* an empty sum is the int 0, which adds to a float as 0.0 */
}

/* item i of a list of exact floats; 0 (and nothing set) when it is not one */
static inline int
float_at(PyObject *list, Py_ssize_t i, double *out)
{
    if (Floats_Check(list)) {
        if (i < 0 || i >= Py_SIZE(list))
            return 0;
        *out = ((Floats *)list)->v[i];
        return 1;
    }
    if (!PyList_Check(list) || i < 0 || i >= PyList_GET_SIZE(list))
        return 0;
    PyObject *f = PyList_GET_ITEM(list, i);
    if (!PyFloat_CheckExact(f))
        return 0;
    *out = PyFloat_AS_DOUBLE(f);
    return 1;
}

/* (t + (x,)) as a new tuple */
static PyObject *
tuple_plus(PyObject *t, PyObject *x)
{
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    PyObject *out = PyTuple_New(n + 1);
    if (!out)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(t, i);
        Py_INCREF(v);
        PyTuple_SET_ITEM(out, i, v);
    }
    Py_INCREF(x);
    PyTuple_SET_ITEM(out, n, x);
    return out;
}

PyDoc_STRVAR(assignments_doc,
             "assignments(hops, path, leave, dest, transfer, edge, rel_tol)\n"
             "-> (J*, [(lines, transfers), ...]) | None\n\n"
             "maptab.costs.optimal_assignments over the CostTable's hops and one\n"
             "WeightedCosts' lists (the markings as (lines, transfers) pairs, sorted by\n"
             "transfers). None where the Python function is to run instead: a route of one\n"
             "station, a hop that is not in `hops`, a value that is not of the types a\n"
             "CostTable holds (it raises what it raises there).");

static PyObject *
solvercore_assignments(PyObject *module, PyObject *args)
{
    PyObject *hops, *path_obj, *leave_l, *dest_l, *tr_l, *edge_l;
    double rel_tol;
    if (!PyArg_ParseTuple(args, "O!OOOOOd", &PyDict_Type, &hops, &path_obj, &leave_l, &dest_l,
                          &tr_l, &edge_l, &rel_tol))
        return NULL;
    PyObject *pseq = PySequence_Fast(path_obj, "path: a sequence of station numbers");
    if (!pseq)
        return NULL;
    PyObject *result = NULL, **opt = NULL, **line = NULL, **layer = NULL, **next = NULL;
    Py_ssize_t *cnt = NULL, *off = NULL, *soff = NULL, *st = NULL;
    double *buf = NULL;
    char *tight = NULL, *chg = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(pseq), k = n - 1, n_opts = 0, n_steps = 0;
    Py_ssize_t widest = 1;
    if (k < 1)
        goto fallback;
    opt = PyMem_Calloc((size_t)k, sizeof(PyObject *));
    cnt = PyMem_Calloc((size_t)k, sizeof(Py_ssize_t));
    off = PyMem_Calloc((size_t)k + 1, sizeof(Py_ssize_t));
    soff = PyMem_Calloc((size_t)k + 1, sizeof(Py_ssize_t));
    st = PyMem_Calloc((size_t)n, sizeof(Py_ssize_t));
    if (!opt || !cnt || !off || !soff || !st) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject **items = PySequence_Fast_ITEMS(pseq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i]))
            goto fallback;
        st[i] = PyLong_AsSsize_t(items[i]);
        if (st[i] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            goto fallback;
        }
    }
    for (Py_ssize_t h = 0; h < k; h++) { /* the hop options, hops[(path[h], path[h + 1])] */
        PyObject *key = PyTuple_Pack(2, items[h], items[h + 1]);
        if (!key)
            goto done;
        PyObject *o = PyDict_GetItemWithError(hops, key); /* borrowed */
        Py_DECREF(key);
        if (!o) {
            if (PyErr_Occurred())
                goto done;
            goto fallback;
        }
        if (!PyList_CheckExact(o) || PyList_GET_SIZE(o) < 1)
            goto fallback;
        opt[h] = o;
        cnt[h] = PyList_GET_SIZE(o);
        if (cnt[h] > widest)
            widest = cnt[h];
        off[h] = n_opts;
        n_opts += cnt[h];
        soff[h] = n_steps;
        if (h)
            n_steps += cnt[h - 1] * cnt[h];
    }
    off[k] = n_opts;
    soff[k] = n_steps;
    /* per option: its line (borrowed) and edge cost; per station of the path: leave, transfer */
    line = PyMem_Calloc((size_t)n_opts, sizeof(PyObject *));
    buf = PyMem_Calloc((size_t)(6 * n_opts + 2 * n + n_steps + 1), sizeof(double));
    tight = PyMem_Calloc((size_t)n_steps + 1, 1);
    chg = PyMem_Calloc((size_t)n_steps + 1, 1);
    if (!line || !buf || !tight || !chg) {
        PyErr_NoMemory();
        goto done;
    }
    double *ec = buf, *fwd = ec + n_opts, *bwd = fwd + n_opts, *tf = bwd + n_opts;
    double *tb = tf + n_opts, *lv = tb + n_opts, *tr = lv + n, *step = tr + n;
    for (Py_ssize_t h = 0; h < k; h++) {
        for (Py_ssize_t b = 0; b < cnt[h]; b++) {
            PyObject *pair = PyList_GET_ITEM(opt[h], b);
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
                goto fallback;
            PyObject *ln = PyTuple_GET_ITEM(pair, 0), *e = PyTuple_GET_ITEM(pair, 1);
            if ((ln != Py_None && !PyUnicode_CheckExact(ln)) || !PyLong_CheckExact(e))
                goto fallback;
            Py_ssize_t ei = PyLong_AsSsize_t(e);
            if (ei == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto fallback;
            }
            if (!float_at(edge_l, ei, &ec[off[h] + b]))
                goto fallback;
            line[off[h] + b] = ln;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!float_at(leave_l, st[i], &lv[i]) || !float_at(tr_l, st[i], &tr[i]))
            goto fallback;
    double dest;
    if (!float_at(dest_l, st[k], &dest))
        goto fallback;

    if (widest == 1) { /* one assignment: the sums of the plain loops, in their order */
        PySum a = {0.0, 0.0, 0}, es = {0.0, 0.0, 0}, ts = {0.0, 0.0, 0};
        for (Py_ssize_t i = 0; i < k; i++)
            pysum_add(&a, lv[i]);
        double total = pysum_value(&a) + dest;
        for (Py_ssize_t h = 0; h < k; h++)
            pysum_add(&es, ec[h]);
        PyObject *lines_t = PyTuple_New(k), *marks = PyList_New(0);
        if (!lines_t || !marks) {
            Py_XDECREF(lines_t);
            Py_XDECREF(marks);
            goto done;
        }
        for (Py_ssize_t h = 0; h < k; h++) {
            Py_INCREF(line[h]);
            PyTuple_SET_ITEM(lines_t, h, line[h]);
            if (!h)
                continue;
            int ne = PyObject_RichCompareBool(line[h - 1], line[h], Py_NE);
            PyObject *pos = ne > 0 ? PyLong_FromSsize_t(h) : NULL;
            if (ne < 0 || (ne > 0 && (!pos || PyList_Append(marks, pos) < 0))) {
                Py_XDECREF(pos);
                Py_DECREF(lines_t);
                Py_DECREF(marks);
                goto done;
            }
            Py_XDECREF(pos);
            if (ne)
                pysum_add(&ts, tr[h]);
        }
        total += pysum_value(&es) + pysum_value(&ts);
        PyObject *transfers = PyList_AsTuple(marks);
        Py_DECREF(marks);
        if (!transfers) {
            Py_DECREF(lines_t);
            goto done;
        }
        result = Py_BuildValue("(d[(NN)])", total, lines_t, transfers);
        goto done;
    }

    /* step[h][a][b]: entering hop h by its option b from option a of hop h-1; chg: a line
       change there */
    int all_zero = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        all_zero &= lv[i] == 0.0 && tr[i] == 0.0; /* (NaN is not zero, as for any()) */
    for (Py_ssize_t o = 0; o < n_opts; o++)
        all_zero &= ec[o] == 0.0;
    for (Py_ssize_t h = 1; h < k; h++) {
        for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
            for (Py_ssize_t b = 0; b < cnt[h]; b++) {
                Py_ssize_t s = soff[h] + a * cnt[h] + b;
                int ne = PyObject_RichCompareBool(line[off[h - 1] + a], line[off[h] + b], Py_NE);
                if (ne < 0)
                    goto done;
                chg[s] = (char)ne;
                step[s] = (lv[h] + ec[off[h] + b]) + (ne ? tr[h] : 0.0);
            }
        }
    }
    double best, limit;
    if (all_zero) { /* every assignment J-optimal, every step tight */
        memset(fwd, 0, sizeof(double) * (size_t)n_opts);
        memset(bwd, 0, sizeof(double) * (size_t)n_opts);
        memset(tight, 1, (size_t)n_steps + 1);
    } else {
        for (Py_ssize_t b = 0; b < cnt[0]; b++)
            fwd[b] = lv[0] + ec[b];
        for (Py_ssize_t h = 1; h < k; h++) {
            for (Py_ssize_t b = 0; b < cnt[h]; b++) {
                double m = 0.0;
                for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
                    double x = fwd[off[h - 1] + a] + step[soff[h] + a * cnt[h] + b];
                    if (!a || x < m)
                        m = x;
                }
                fwd[off[h] + b] = m;
            }
        }
        for (Py_ssize_t b = 0; b < cnt[k - 1]; b++)
            bwd[off[k - 1] + b] = 0.0;
        for (Py_ssize_t h = k - 1; h > 0; h--) {
            for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
                double m = 0.0;
                for (Py_ssize_t b = 0; b < cnt[h]; b++) {
                    double x = step[soff[h] + a * cnt[h] + b] + bwd[off[h] + b];
                    if (!b || x < m)
                        m = x;
                }
                bwd[off[h - 1] + a] = m;
            }
        }
    }
    best = fwd[off[k - 1]];
    for (Py_ssize_t b = 1; b < cnt[k - 1]; b++)
        if (fwd[off[k - 1] + b] < best)
            best = fwd[off[k - 1] + b];
    limit = (best + rel_tol * fabs(best)) + 1e-12; /* within(x, best) is x <= limit */
    if (!all_zero)
        for (Py_ssize_t h = 1; h < k; h++)
            for (Py_ssize_t a = 0; a < cnt[h - 1]; a++)
                for (Py_ssize_t b = 0; b < cnt[h]; b++) {
                    Py_ssize_t s = soff[h] + a * cnt[h] + b;
                    tight[s] = (fwd[off[h - 1] + a] + step[s]) + bwd[off[h] + b] <= limit;
                }
    /* fewest transfers over the tight steps, forward (tf) and backward (tb) */
    const double inf = INFINITY;
    for (Py_ssize_t b = 0; b < cnt[0]; b++)
        tf[b] = fwd[b] + bwd[b] <= limit ? 0.0 : inf;
    for (Py_ssize_t h = 1; h < k; h++)
        for (Py_ssize_t b = 0; b < cnt[h]; b++) {
            double m = inf;
            int any = 0;
            for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
                Py_ssize_t s = soff[h] + a * cnt[h] + b;
                double p = tf[off[h - 1] + a];
                if (p < inf && tight[s]) {
                    double x = p + chg[s];
                    if (!any || x < m)
                        m = x;
                    any = 1;
                }
            }
            tf[off[h] + b] = m;
        }
    double fewest = tf[off[k - 1]];
    for (Py_ssize_t b = 1; b < cnt[k - 1]; b++)
        if (tf[off[k - 1] + b] < fewest)
            fewest = tf[off[k - 1] + b];
    for (Py_ssize_t b = 0; b < cnt[k - 1]; b++)
        tb[off[k - 1] + b] = tf[off[k - 1] + b] < inf ? 0.0 : inf;
    for (Py_ssize_t h = k - 1; h > 0; h--)
        for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
            double m = inf;
            int any = 0;
            for (Py_ssize_t b = 0; b < cnt[h]; b++) {
                Py_ssize_t s = soff[h] + a * cnt[h] + b;
                double x = tb[off[h] + b];
                if (x < inf && tight[s]) {
                    x = chg[s] + x;
                    if (!any || x < m)
                        m = x;
                    any = 1;
                }
            }
            tb[off[h - 1] + a] = m;
        }
    /* markings: forward over the steps that keep both conditions, a dict of transfer
       positions -> lines per option, as the Python loop builds them */
    layer = PyMem_Calloc((size_t)widest, sizeof(PyObject *));
    next = PyMem_Calloc((size_t)widest, sizeof(PyObject *));
    if (!layer || !next) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *empty = PyTuple_New(0);
    if (!empty)
        goto done;
    for (Py_ssize_t b = 0; b < cnt[0]; b++) {
        layer[b] = PyDict_New();
        if (!layer[b]) {
            Py_DECREF(empty);
            goto done;
        }
        if (tf[b] + tb[b] == fewest) {
            PyObject *ls = PyTuple_Pack(1, line[b]);
            int bad = !ls || PyDict_SetItem(layer[b], empty, ls) < 0;
            Py_XDECREF(ls);
            if (bad) {
                Py_DECREF(empty);
                goto done;
            }
        }
    }
    Py_DECREF(empty);
    for (Py_ssize_t h = 1; h < k; h++) {
        PyObject *pos = PyLong_FromSsize_t(h);
        if (!pos)
            goto done;
        for (Py_ssize_t b = 0; b < cnt[h]; b++) {
            next[b] = PyDict_New();
            if (!next[b]) {
                Py_DECREF(pos);
                goto done;
            }
            PyObject *now = line[off[h] + b];
            for (Py_ssize_t a = 0; a < cnt[h - 1]; a++) {
                Py_ssize_t s = soff[h] + a * cnt[h] + b;
                if (!PyDict_GET_SIZE(layer[a]) || !tight[s])
                    continue;
                int change = chg[s];
                if ((tf[off[h - 1] + a] + change) + tb[off[h] + b] != fewest)
                    continue;
                Py_ssize_t it = 0;
                PyObject *m, *ls;
                while (PyDict_Next(layer[a], &it, &m, &ls)) {
                    PyObject *key = change ? tuple_plus(m, pos) : (Py_INCREF(m), m);
                    if (!key) {
                        Py_DECREF(pos);
                        goto done;
                    }
                    int has = PyDict_Contains(next[b], key);
                    PyObject *val = has ? NULL : tuple_plus(ls, now);
                    int bad = has < 0 || (!has && (!val || PyDict_SetItem(next[b], key, val) < 0));
                    Py_DECREF(key);
                    Py_XDECREF(val);
                    if (bad) {
                        Py_DECREF(pos);
                        goto done;
                    }
                }
            }
        }
        Py_DECREF(pos);
        for (Py_ssize_t a = 0; a < cnt[h - 1]; a++)
            Py_CLEAR(layer[a]);
        for (Py_ssize_t b = 0; b < cnt[h]; b++) {
            layer[b] = next[b];
            next[b] = NULL;
        }
    }
    {
        PyObject *found = PyDict_New();
        if (!found)
            goto done;
        for (Py_ssize_t b = 0; b < cnt[k - 1]; b++) {
            Py_ssize_t it = 0;
            PyObject *m, *ls;
            while (PyDict_Next(layer[b], &it, &m, &ls))
                if (!PyDict_SetDefault(found, m, ls)) {
                    Py_DECREF(found);
                    goto done;
                }
        }
        PyObject *pairs = PyDict_Items(found); /* (transfers, lines), sorted by transfers */
        Py_DECREF(found);
        if (!pairs || PyList_Sort(pairs) < 0) {
            Py_XDECREF(pairs);
            goto done;
        }
        Py_ssize_t np = PyList_GET_SIZE(pairs);
        PyObject *marks = PyList_New(np);
        if (!marks) {
            Py_DECREF(pairs);
            goto done;
        }
        for (Py_ssize_t i = 0; i < np; i++) {
            PyObject *p = PyList_GET_ITEM(pairs, i);
            PyObject *q = PyTuple_Pack(2, PyTuple_GET_ITEM(p, 1), PyTuple_GET_ITEM(p, 0));
            if (!q) {
                Py_DECREF(pairs);
                Py_DECREF(marks);
                goto done;
            }
            PyList_SET_ITEM(marks, i, q);
        }
        Py_DECREF(pairs);
        result = Py_BuildValue("(dN)", best + dest, marks);
    }
    goto done;
fallback:
    result = Py_None;
    Py_INCREF(result);
done:
    if (layer)
        for (Py_ssize_t i = 0; i < widest; i++)
            Py_XDECREF(layer[i]);
    if (next)
        for (Py_ssize_t i = 0; i < widest; i++)
            Py_XDECREF(next[i]);
    PyMem_Free(layer);
    PyMem_Free(next);
    PyMem_Free(opt);
    PyMem_Free(cnt);
    PyMem_Free(off);
    PyMem_Free(soff);
    PyMem_Free(st);
    PyMem_Free(line);
    PyMem_Free(buf);
    PyMem_Free(tight);
    PyMem_Free(chg);
    Py_DECREF(pseq);
    return result;
}

/* ------------------------------------------------------------------ weigh */

PyDoc_STRVAR(weigh_doc,
             "weigh(columns, weights) -> Floats\n\n"
             "maptab.costs.weigh(columns, weights).tolist() as Floats: ((t*wt + p*wp) + c*wc)\n"
             "+ r*wr per row of the four float64 columns (t, p, c, r), each step rounded as\n"
             "numpy's.");

static PyObject *
solvercore_weigh(PyObject *module, PyObject *args)
{
    PyObject *cols;
    double w[4];
    if (!PyArg_ParseTuple(args, "O(dddd)", &cols, &w[0], &w[1], &w[2], &w[3]))
        return NULL;
    PyObject *seq = PySequence_Fast(cols, "columns: four float64 arrays");
    if (!seq)
        return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != 4) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "columns: four float64 arrays");
        return NULL;
    }
    Py_buffer view[4];
    int got = 0;
    PyObject *out = NULL;
    Py_ssize_t n = -1;
    for (; got < 4; got++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &view[got],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        Py_ssize_t len = view[got].len / (Py_ssize_t)sizeof(double);
        if (view[got].itemsize != sizeof(double) || !view[got].format ||
            strcmp(view[got].format, "d") != 0 || (n >= 0 && len != n)) {
            PyErr_SetString(PyExc_ValueError, "columns: four float64 arrays of one length");
            got++;
            goto done;
        }
        n = len;
    }
    const double *t = view[0].buf, *p = view[1].buf, *c = view[2].buf, *r = view[3].buf;
    Floats *f = floats_new(n);
    if (!f)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        double a = t[i] * w[0];
        double b = p[i] * w[1];
        double sum = a + b;
        double cc = c[i] * w[2];
        sum = sum + cc;
        double rr = r[i] * w[3];
        sum = sum + rr;
        f->v[i] = sum;
    }
    out = (PyObject *)f;
done:
    while (got > 0)
        PyBuffer_Release(&view[--got]);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef solvercore_methods[] = {
    {"weigh", solvercore_weigh, METH_VARARGS, weigh_doc},
    {"assignments", solvercore_assignments, METH_VARARGS, assignments_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef solvercore_module = {
    PyModuleDef_HEAD_INIT, "maptab._solvercore",
    "The additive search's inner loops in C (an optional accelerator of maptab.solver).", -1,
    solvercore_methods,
};

PyMODINIT_FUNC
PyInit__solvercore(void)
{
    if (PyType_Ready(&GraphType) < 0 || PyType_Ready(&FloatsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&solvercore_module);
    if (!m)
        return NULL;
    Py_INCREF(&GraphType);
    if (PyModule_AddObject(m, "Graph", (PyObject *)&GraphType) < 0) {
        Py_DECREF(&GraphType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FloatsType);
    if (PyModule_AddObject(m, "Floats", (PyObject *)&FloatsType) < 0) {
        Py_DECREF(&FloatsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
