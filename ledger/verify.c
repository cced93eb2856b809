/* verify.c - the chain's verdict (see verify.h).
 *
 * The lines are read into entries (seq, hash, link, position). The chain
 * is followed backwards by its links from the record with the highest
 * seq. Where a link finds nothing, the chain goes on from the record
 * before it in the files, and the break is judged by the sequence
 * numbers: a gap is a removal, no gap an edited record. Records the chain
 * never reaches were inserted; records it reaches out of file order
 * (outside a longest increasing run of positions) were reordered.
 * Flow: StateDirectory -> [ledger verify] -> ctl, evidence bundle. */
#include "verify.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "util/json-util.h"

typedef struct Entry {
        uint64_t seq;
        uint8_t hash[LEDGER_HASH_BYTES], prev[LEDGER_HASH_BYTES];
        const char *file;       /* into Walk.files */
        unsigned line;
        bool valid, hash_ok, on_chain;
} Entry;

typedef struct Walk {
        LedgerFile *files;
        size_t n_files, cur;
        Entry *e;
        size_t n, cap;
        size_t *by_hash;        /* the valid entries, by hash */
        size_t n_valid;
        LedgerReport *report;
} Walk;

static const char *const kind_names[_LEDGER_FINDING_MAX] = {
        [LEDGER_FINDING_CHANGED] = "changed",     [LEDGER_FINDING_REMOVED] = "removed",
        [LEDGER_FINDING_REORDERED] = "reordered", [LEDGER_FINDING_INSERTED] = "inserted",
        [LEDGER_FINDING_MALFORMED] = "malformed", [LEDGER_FINDING_TORN] = "torn",
        [LEDGER_FINDING_ANCHOR] = "anchor",
};

const char *ledger_finding_kind_to_string(LedgerFindingKind k) {
        return (unsigned) k < _LEDGER_FINDING_MAX ? kind_names[k] : NULL;
}

LedgerReport *ledger_report_free(LedgerReport *r) {
        if (r) {
                free(r->findings);
                free(r);
        }
        return NULL;
}

bool ledger_report_intact(const LedgerReport *r) {
        for (size_t i = 0; i < r->n_findings; i++)
                if (r->findings[i].kind != LEDGER_FINDING_TORN)
                        return false;
        return true;
}

static int add_finding(LedgerReport *rep, LedgerFindingKind kind, const char *file, unsigned line, uint64_t seq,
                       uint64_t seq_last) {
        LedgerFinding *m = reallocarray(rep->findings, rep->n_findings + 1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        rep->findings = m;
        m += rep->n_findings++;
        *m = (LedgerFinding){ .kind = kind, .line = line, .seq = seq, .seq_last = seq_last };
        snprintf(m->file, sizeof(m->file), "%s", file);
        return 0;
}

static int at(Walk *w, LedgerFindingKind kind, const Entry *e, uint64_t seq, uint64_t seq_last) {
        return add_finding(w->report, kind, e->file, e->line, seq, seq_last);
}

static int on_line(void *userdata, const char *file, unsigned line_no, const char *line, size_t len,
                   const LedgerRecord *rec, bool torn) {
        Walk *w = userdata;
        Entry *e;

        while (w->cur < w->n_files && strcmp(w->files[w->cur].name, file) != 0)
                w->cur++;
        if (w->cur == w->n_files)
                return -ESTALE;   /* a file came or went while we read */
        file = w->files[w->cur].name;
        if (torn)
                return add_finding(w->report, LEDGER_FINDING_TORN, file, line_no, 0, 0);
        if (w->n == w->cap) {
                Entry *m = reallocarray(w->e, w->cap ? w->cap * 2 : 256, sizeof(*m));

                if (!m)
                        return -ENOMEM;
                w->e = m;
                w->cap = w->cap ? w->cap * 2 : 256;
        }
        e = &w->e[w->n++];
        *e = (Entry){ .file = file, .line = line_no, .valid = rec != NULL };
        if (!rec)
                return at(w, LEDGER_FINDING_MALFORMED, e, 0, 0);
        e->seq = rec->seq;
        e->hash_ok = rec->hash_ok;
        memcpy(e->hash, rec->hash, LEDGER_HASH_BYTES);
        memcpy(e->prev, rec->prev, LEDGER_HASH_BYTES);
        w->n_valid++;
        return rec->hash_ok ? 0 : at(w, LEDGER_FINDING_CHANGED, e, rec->seq, rec->seq);
}

static const Walk *sort_walk;

static int hash_cmp(const void *a, const void *b) {
        const Entry *x = &sort_walk->e[*(const size_t *) a], *y = &sort_walk->e[*(const size_t *) b];
        int c = memcmp(x->hash, y->hash, LEDGER_HASH_BYTES);

        return c != 0 ? c : (*(const size_t *) a > *(const size_t *) b) - (*(const size_t *) a < *(const size_t *) b);
}

static int index_hashes(Walk *w) {
        size_t k = 0;

        w->by_hash = calloc(w->n_valid ? w->n_valid : 1, sizeof(size_t));
        if (!w->by_hash)
                return -ENOMEM;
        for (size_t i = 0; i < w->n; i++)
                if (w->e[i].valid)
                        w->by_hash[k++] = i;
        sort_walk = w;
        qsort(w->by_hash, w->n_valid, sizeof(size_t), hash_cmp);
        return 0;
}

/* The first entry off the chain whose hash is h; SIZE_MAX for none. */
static size_t find_hash(const Walk *w, const uint8_t h[static LEDGER_HASH_BYTES]) {
        size_t lo = 0, hi = w->n_valid;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (memcmp(w->e[w->by_hash[mid]].hash, h, LEDGER_HASH_BYTES) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < w->n_valid && memcmp(w->e[w->by_hash[lo]].hash, h, LEDGER_HASH_BYTES) == 0; lo++)
                if (!w->e[w->by_hash[lo]].on_chain)
                        return w->by_hash[lo];
        return SIZE_MAX;
}

static bool is_genesis(const Entry *e) {
        static const uint8_t zero[LEDGER_HASH_BYTES];

        return e->seq == 1 && memcmp(e->prev, zero, LEDGER_HASH_BYTES) == 0;
}

/* Where the link of e (at index i) finds nothing: the record before it in
 * the files carries the chain on; *ret is it (SIZE_MAX: e is the oldest). */
static int judge_break(Walk *w, size_t i, size_t *ret) {
        const Entry *r = &w->e[i], *c;
        uint64_t malformed = 0;
        size_t j = i;

        while (j-- > 0 && (!w->e[j].valid || w->e[j].on_chain))
                malformed += !w->e[j].valid;
        *ret = j;   /* SIZE_MAX when the loop ran out */
        if (j == SIZE_MAX) {
                if (r->seq == 1 && !is_genesis(r))
                        return at(w, LEDGER_FINDING_CHANGED, r, r->seq, r->seq);
                return 0;
        }
        c = &w->e[j];
        if (r->seq > c->seq + 1 + malformed)
                return at(w, LEDGER_FINDING_REMOVED, r, c->seq + 1 + malformed, r->seq - 1);
        if (r->seq == c->seq + 1 && malformed == 0 && c->hash_ok)
                return at(w, LEDGER_FINDING_CHANGED, c, c->seq, c->seq);
        if (r->seq <= c->seq)
                return at(w, LEDGER_FINDING_CHANGED, r, r->seq, r->seq);
        return 0;   /* the malformed lines between were those records: said */
}

/* Follows the links from the highest seq; *chain gets the entries newest
 * first, *n_chain their count. */
static int follow_chain(Walk *w, size_t *chain, size_t *n_chain) {
        size_t cur = SIZE_MAX;
        int r;

        for (size_t i = 0; i < w->n; i++)
                if (w->e[i].valid && (cur == SIZE_MAX || w->e[i].seq >= w->e[cur].seq))
                        cur = i;
        *n_chain = 0;
        while (cur != SIZE_MAX) {
                size_t next;

                w->e[cur].on_chain = true;
                chain[(*n_chain)++] = cur;
                if (is_genesis(&w->e[cur]))
                        break;
                next = find_hash(w, w->e[cur].prev);
                if (next == SIZE_MAX) {
                        r = judge_break(w, cur, &next);
                        if (r < 0)
                                return r;
                }
                cur = next;
        }
        return 0;
}

/* Marks the chain's entries (oldest first: pos[k] their file positions)
 * that lie outside one longest increasing run of positions. */
static int mark_reordered(Walk *w, const size_t *chain, size_t n) {
        _cleanup_free_ size_t *tail = calloc(n + 1, sizeof(size_t)), *parent = calloc(n + 1, sizeof(size_t));
        _cleanup_free_ bool *keep = calloc(n + 1, sizeof(bool));
        size_t len = 0;
        int r;

        if (!tail || !parent || !keep)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {   /* k-th oldest: chain[n - 1 - k] */
                size_t pos = chain[n - 1 - k], lo = 0, hi = len;

                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;

                        if (chain[n - 1 - tail[mid]] < pos)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                parent[k] = lo > 0 ? tail[lo - 1] : SIZE_MAX;
                tail[lo] = k;
                len += lo == len;
        }
        for (size_t k = len ? tail[len - 1] : SIZE_MAX; k != SIZE_MAX; k = parent[k])
                keep[k] = true;
        for (size_t k = 0; k < n; k++) {
                const Entry *e = &w->e[chain[n - 1 - k]];

                r = keep[k] ? 0 : at(w, LEDGER_FINDING_REORDERED, e, e->seq, e->seq);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The oldest record against the oldest file's name, the anchor against
 * the chain, and the report's summary. */
static int judge_ends(Walk *w, const size_t *chain, size_t n, const LedgerAnchor *anchor) {
        LedgerReport *rep = w->report;
        const Entry *oldest = &w->e[chain[n - 1]], *newest = &w->e[chain[0]];
        int r = 0;

        rep->first_seq = oldest->seq;
        rep->last_seq = newest->seq;
        memcpy(rep->last_hash, newest->hash, LEDGER_HASH_BYTES);
        if (oldest->file == w->files[0].name && oldest->seq > w->files[0].first_seq)
                r = at(w, LEDGER_FINDING_REMOVED, oldest, w->files[0].first_seq, oldest->seq - 1);
        if (r < 0 || !anchor || anchor->seq < oldest->seq)
                return r;   /* an anchor older than the ledger was rotated out */
        if (anchor->seq > newest->seq)
                return add_finding(rep, LEDGER_FINDING_ANCHOR, newest->file, newest->line + 1, newest->seq + 1,
                                   anchor->seq);
        for (size_t k = 0; k < n; k++) {
                const Entry *e = &w->e[chain[k]];

                if (e->seq == anchor->seq)
                        return memcmp(e->hash, anchor->hash, LEDGER_HASH_BYTES) == 0
                                       ? 0
                                       : at(w, LEDGER_FINDING_ANCHOR, e, e->seq, e->seq);
        }
        return add_finding(rep, LEDGER_FINDING_ANCHOR, newest->file, newest->line, anchor->seq, anchor->seq);
}

static int finding_cmp(const void *a, const void *b) {
        const LedgerFinding *x = a, *y = b;
        int c = strcmp(x->file, y->file);

        return c != 0 ? c : (x->line > y->line) - (x->line < y->line);
}

static int verify_walk(Walk *w, const LedgerAnchor *anchor) {
        _cleanup_free_ size_t *chain = NULL;
        size_t n_chain;
        int r;

        if (w->n_valid == 0)
                return 0;
        chain = calloc(w->n_valid, sizeof(size_t));
        if (!chain)
                return -ENOMEM;
        r = index_hashes(w);
        r = r < 0 ? r : follow_chain(w, chain, &n_chain);
        r = r < 0 ? r : mark_reordered(w, chain, n_chain);
        for (size_t i = 0; r >= 0 && i < w->n; i++)
                if (w->e[i].valid && !w->e[i].on_chain)
                        r = at(w, LEDGER_FINDING_INSERTED, &w->e[i], w->e[i].seq, w->e[i].seq);
        return r < 0 ? r : judge_ends(w, chain, n_chain, anchor);
}

int ledger_verify(int dir_fd, const LedgerAnchor *anchor, LedgerReport **ret) {
        _cleanup_(ledger_report_freep) LedgerReport *rep = calloc(1, sizeof(LedgerReport));
        Walk w = { .report = rep };
        int r;

        if (!rep)
                return -ENOMEM;
        r = ledger_files_list(dir_fd, &w.files, &w.n_files);
        r = r < 0 ? r : ledger_foreach(dir_fd, on_line, &w);
        r = r < 0 ? r : verify_walk(&w, anchor);
        if (r >= 0) {
                rep->files = w.n_files;
                rep->records = w.n_valid;
                if (rep->n_findings > 1)
                        qsort(rep->findings, rep->n_findings, sizeof(LedgerFinding), finding_cmp);
                *ret = TAKE_PTR(rep);
        }
        free(w.files);
        free(w.e);
        free(w.by_hash);
        return r;
}

int ledger_report_to_json(const LedgerReport *rep, struct json_object **ret) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        struct json_object *list = json_object_new_array();
        char hex[2 * LEDGER_HASH_BYTES + 1];
        int r;

        ledger_hash_to_hex(rep->last_hash, hex);
        r = json_put(o, "findings", list);
        r = r < 0 ? r : json_put(o, "intact", json_object_new_boolean(ledger_report_intact(rep)));
        r = r < 0 ? r : json_put(o, "files", json_object_new_uint64(rep->files));
        r = r < 0 ? r : json_put(o, "records", json_object_new_uint64(rep->records));
        r = r < 0 ? r : json_put(o, "first_seq", json_object_new_uint64(rep->first_seq));
        r = r < 0 ? r : json_put(o, "last_seq", json_object_new_uint64(rep->last_seq));
        r = r < 0 ? r : json_put(o, "last_hash", json_object_new_string(hex));
        for (size_t i = 0; r >= 0 && i < rep->n_findings; i++) {
                const LedgerFinding *f = &rep->findings[i];
                struct json_object *x = json_object_new_object();

                r = json_put(x, "kind", json_object_new_string(ledger_finding_kind_to_string(f->kind)));
                r = r < 0 ? r : json_put(x, "file", json_object_new_string(f->file));
                r = r < 0 ? r : json_put(x, "line", json_object_new_uint64(f->line));
                r = r < 0 ? r : json_put(x, "seq", json_object_new_uint64(f->seq));
                r = r < 0 ? r : json_put(x, "seq_last", json_object_new_uint64(f->seq_last));
                if (r < 0 || json_object_array_add(list, x) < 0) {
                        json_object_put(x);
                        return -ENOMEM;
                }
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}
