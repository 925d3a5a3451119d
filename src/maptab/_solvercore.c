/* maptab._solvercore: the two inner loops of maptab.solver's additive search, in C.
 *
 * An optional accelerator, like the C parts of the standard library's heapq or json: every
 * function here computes exactly what the Python method named beside it computes, the
 * same floating-point operations in the same order (built with -ffp-contract=off, so no
 * fused multiply-add changes a rounding), and maptab.solver falls back to that Python code
 * where this module is not built. tests/test_solvercore.py compares the two on random
 * networks and weights.
 *
 *   weigh               <->  maptab.costs.weigh(columns, weights).tolist()
 *   Graph.distances     <->  Solver._distances's search (Dijkstra over line states)
 *   Graph.tied_paths    <->  Solver._tied_simple_paths's backtrack
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
    if (!PyList_Check(list) || PyList_GET_SIZE(list) != n) {
        PyErr_Format(PyExc_ValueError, "%s: a list of %zd floats", what, n);
        return -1;
    }
    int usable = 1;
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
             "distances(cost, s, stop, dest, rel_tol) -> list[float] | None\n\n"
             "Solver._distances's search from state s over the arc costs `cost` (a list of\n"
             "floats): stop is the target station, or -1 for the whole tree. None when a cost\n"
             "is not finite or is negative (the caller searches in Python).");

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
    PyObject *out = PyList_New(n);
    if (!out)
        return NULL;
    for (Py_ssize_t x = 0; x < n; x++) {
        PyObject *f = PyFloat_FromDouble(dist[x]);
        if (!f) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, x, f);
    }
    return out;
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
             "list), over the arc costs `cost` and state distances `dist` (lists of floats):\n"
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

/* ------------------------------------------------------------------ weigh */

PyDoc_STRVAR(weigh_doc,
             "weigh(columns, weights) -> list[float]\n\n"
             "maptab.costs.weigh(columns, weights).tolist(): ((t*wt + p*wp) + c*wc) + r*wr per\n"
             "row of the four float64 columns (t, p, c, r), each step rounded as numpy's.");

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
    out = PyList_New(n);
    if (!out)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        double a = t[i] * w[0];
        double b = p[i] * w[1];
        double sum = a + b;
        double cc = c[i] * w[2];
        sum = sum + cc;
        double rr = r[i] * w[3];
        sum = sum + rr;
        PyObject *f = PyFloat_FromDouble(sum);
        if (!f) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, f);
    }
done:
    while (got > 0)
        PyBuffer_Release(&view[--got]);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef solvercore_methods[] = {
    {"weigh", solvercore_weigh, METH_VARARGS, weigh_doc},
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
    if (PyType_Ready(&GraphType) < 0)
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
    return m;
}
