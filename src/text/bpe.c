#include "text/bpe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/error.h"
#include "base/mem.h"
#include "text/bpe_build.h"
#include "text/qwen2_split.h"
#include "text/utf8.h"

#define NONE (-1)
#define CACHE_WORD 256       /* longer words are merged every time */
#define CACHE_WORDS (1 << 16) /* words one call remembers */

/* A string in the pool and what it stands for. */
typedef struct {
    size_t off;
    uint32_t len;
    int32_t id;
} span;

typedef struct {
    span *v;
    size_t n, cap;
} spans;

/* Open addressing over the indices of a span array, -1 = empty. */
typedef struct {
    int32_t *slot;
    size_t mask;
} strtab;

/* A byte trie of the added tokens; the root's children are in root[]. */
typedef struct {
    int32_t child, sibling;
    int32_t raw, norm; /* index of the added token ending here, by kind */
    uint8_t byte;
} trie_node;

struct ac_bpe {
    char *pool;
    size_t pool_n, pool_cap;
    spans vocab, added;
    uint8_t *added_special, *added_normalized; /* flags of the added tokens */
    size_t flags_cap;
    strtab vocab_tab, added_tab;
    int size;
    int32_t *vocab_of_id, *added_of_id; /* span indices, -1 */
    uint64_t *merge_key;                /* left << 32 | right, UINT64_MAX = empty */
    int32_t *merge_rank, *merge_new;
    size_t merge_mask, n_merges, merge_cap;
    int32_t root[256];
    trie_node *trie;
    size_t trie_n, trie_cap;
    int32_t byte_id[256];   /* vocabulary id of each byte's symbol, -1 */
    int16_t char_byte[0x144]; /* the byte of each symbol code point, -1 */
    int ignore_merges;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return ac_error(AC_ERR_NOMEM, "out of memory (%zu bytes)", c * size);
    *p = q;
    *cap = c;
    return 0;
}

static ac_status pool_put(ac_bpe *b, const char *s, size_t n, size_t *off)
{
    if (grow((void **)&b->pool, &b->pool_cap, b->pool_n + n + 1, 1)) return AC_ERR_NOMEM;
    memcpy(b->pool + b->pool_n, s, n);
    b->pool[b->pool_n + n] = 0;
    *off = b->pool_n;
    b->pool_n += n + 1;
    return AC_OK;
}

static ac_status spans_push(spans *a, span s)
{
    if (grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v)) return AC_ERR_NOMEM;
    a->v[a->n++] = s;
    return AC_OK;
}

static int span_is(const ac_bpe *b, const span *s, const char *p, size_t n)
{
    return s->len == n && memcmp(b->pool + s->off, p, n) == 0;
}

/* The index of string P in A through table T, -1 when absent. */
static int32_t tab_find(const ac_bpe *b, const strtab *t, const spans *a, const char *p, size_t n)
{
    if (!t->slot) return NONE;
    for (size_t i = (size_t)hash_bytes(p, n) & t->mask; t->slot[i] >= 0; i = (i + 1) & t->mask)
        if (span_is(b, &a->v[t->slot[i]], p, n)) return t->slot[i];
    return NONE;
}

/* Indexes A; a string that appears twice is an error naming WHAT. */
static ac_status tab_build(ac_bpe *b, strtab *t, const spans *a, const char *name, const char *what)
{
    size_t cap = 16;
    while (cap < 2 * a->n) cap *= 2;
    t->slot = ac_malloc(cap * sizeof *t->slot);
    if (!t->slot) return AC_ERR_NOMEM;
    memset(t->slot, 0xFF, cap * sizeof *t->slot);
    t->mask = cap - 1;
    for (size_t k = 0; k < a->n; k++) {
        const span *s = &a->v[k];
        int32_t dup = tab_find(b, t, a, b->pool + s->off, s->len);
        if (dup >= 0)
            return ac_error(AC_ERR_FORMAT, "%s: %s '%s' appears twice (ids %d and %d)", name, what, b->pool + s->off,
                            (int)a->v[dup].id, (int)s->id);
        size_t i = (size_t)hash_bytes(b->pool + s->off, s->len) & t->mask;
        while (t->slot[i] >= 0) i = (i + 1) & t->mask;
        t->slot[i] = (int32_t)k;
    }
    return AC_OK;
}

/* ---- building ----------------------------------------------------------- */

ac_bpe *ac_bpe_new(void)
{
    ac_bpe *b = ac_calloc(1, sizeof *b);
    if (b) memset(b->root, 0xFF, sizeof b->root);
    return b;
}

void ac_bpe_set_ignore_merges(ac_bpe *b, int on) { b->ignore_merges = on; }

static ac_status check_id(long long id, const char *name, const char *what, const char *s)
{
    if (id < 0 || id > AC_BPE_MAX_ID)
        return ac_error(AC_ERR_FORMAT, "%s: %s '%s' has id %lld, outside 0..%d", name, what, s, id, AC_BPE_MAX_ID);
    return AC_OK;
}

static ac_status check_string(const char *s, size_t len, const char *name, const char *what)
{
    if (len == 0) return ac_error(AC_ERR_FORMAT, "%s: an empty %s", name, what);
    if (len > UINT32_MAX / 2) return ac_error(AC_ERR_FORMAT, "%s: a %s of %zu bytes", name, what, len);
    size_t bad = ac_utf8_invalid_at((const uint8_t *)s, len);
    if (bad < len) return ac_error(AC_ERR_FORMAT, "%s: %s '%.40s' is not valid UTF-8 (byte %zu)", name, what, s, bad);
    return AC_OK;
}

ac_status ac_bpe_add_vocab(ac_bpe *b, const char *token, size_t len, long long id, const char *name)
{
    AC_TRY(check_string(token, len, name, "vocabulary token"));
    AC_TRY(check_id(id, name, "vocabulary token", token));
    span s = {0, (uint32_t)len, (int32_t)id};
    AC_TRY(pool_put(b, token, len, &s.off));
    return spans_push(&b->vocab, s);
}

ac_status ac_bpe_end_vocab(ac_bpe *b, const char *name)
{
    if (b->vocab.n == 0) return ac_error(AC_ERR_FORMAT, "%s: the vocabulary is empty", name);
    return tab_build(b, &b->vocab_tab, &b->vocab, name, "vocabulary token");
}

static size_t merge_slot(const ac_bpe *b, uint64_t key)
{
    size_t i = (size_t)mix(key) & b->merge_mask;
    while (b->merge_key[i] != UINT64_MAX && b->merge_key[i] != key) i = (i + 1) & b->merge_mask;
    return i;
}

static ac_status merges_grow(ac_bpe *b)
{
    size_t cap = b->merge_cap ? 2 * b->merge_cap : 1024;
    uint64_t *key = ac_malloc(cap * sizeof *key);
    int32_t *rank = ac_malloc(cap * sizeof *rank), *nw = ac_malloc(cap * sizeof *nw);
    if (!key || !rank || !nw) {
        free(key);
        free(rank);
        free(nw);
        return AC_ERR_NOMEM;
    }
    memset(key, 0xFF, cap * sizeof *key);
    uint64_t *ok = b->merge_key;
    int32_t *orank = b->merge_rank, *onew = b->merge_new;
    size_t ocap = b->merge_cap;
    b->merge_key = key, b->merge_rank = rank, b->merge_new = nw, b->merge_cap = cap, b->merge_mask = cap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (ok[i] == UINT64_MAX) continue;
        size_t j = merge_slot(b, ok[i]);
        key[j] = ok[i], rank[j] = orank[i], nw[j] = onew[i];
    }
    free(ok);
    free(orank);
    free(onew);
    return AC_OK;
}

static int32_t vocab_id(const ac_bpe *b, const char *p, size_t n)
{
    int32_t k = tab_find(b, &b->vocab_tab, &b->vocab, p, n);
    return k < 0 ? NONE : b->vocab.v[k].id;
}

ac_status ac_bpe_add_merge(ac_bpe *b, const char *left, size_t nl, const char *right, size_t nr, const char *name,
                           const char *where)
{
    if (b->n_merges >= INT32_MAX / 2) return ac_error(AC_ERR_FORMAT, "%s: too many merges", name);
    int32_t a = vocab_id(b, left, nl), c = vocab_id(b, right, nr);
    if (a < 0 || c < 0)
        return ac_error(AC_ERR_FORMAT, "%s: %s merges '%.*s' which is not in the vocabulary", name, where,
                        (int)(a < 0 ? (nl > 64 ? 64 : nl) : (nr > 64 ? 64 : nr)), a < 0 ? left : right);
    char small[256], *both = nl + nr <= sizeof small ? small : ac_malloc(nl + nr);
    if (!both) return AC_ERR_NOMEM;
    memcpy(both, left, nl);
    memcpy(both + nl, right, nr);
    int32_t m = vocab_id(b, both, nl + nr);
    if (both != small) free(both);
    if (m < 0)
        return ac_error(AC_ERR_FORMAT, "%s: %s makes '%.*s%.*s' which is not in the vocabulary", name, where,
                        (int)(nl > 64 ? 64 : nl), left, (int)(nr > 64 ? 64 : nr), right);
    if (2 * (b->n_merges + 1) > b->merge_cap) AC_TRY(merges_grow(b));
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)c;
    size_t i = merge_slot(b, key);
    /* a repeated merge takes its last rank, as in HF's merge map */
    b->merge_key[i] = key;
    b->merge_rank[i] = (int32_t)b->n_merges++;
    b->merge_new[i] = m;
    return AC_OK;
}

ac_status ac_bpe_add_token(ac_bpe *b, const char *content, size_t len, long long id, int special, int normalized,
                           const char *name)
{
    AC_TRY(check_string(content, len, name, "added token"));
    AC_TRY(check_id(id, name, "added token", content));
    size_t n = b->added.n, cap = b->flags_cap;
    if (grow((void **)&b->added_special, &cap, n + 1, 1)) return AC_ERR_NOMEM;
    if (grow((void **)&b->added_normalized, &b->flags_cap, n + 1, 1)) return AC_ERR_NOMEM;
    b->added_special[n] = special != 0;
    b->added_normalized[n] = normalized != 0;
    span s = {0, (uint32_t)len, (int32_t)id};
    AC_TRY(pool_put(b, content, len, &s.off));
    return spans_push(&b->added, s);
}

/* Adds added token K as the string P (N > 0 bytes) to the trie. */
static ac_status trie_insert(ac_bpe *b, size_t k, const uint8_t *p, size_t n)
{
    int32_t node = NONE;
    for (size_t i = 0; i < n; i++) {
        /* the child of NODE for byte p[i], or the last sibling before it */
        int32_t c = node < 0 ? b->root[p[i]] : b->trie[node].child, last = NONE;
        while (c >= 0 && b->trie[c].byte != p[i]) last = c, c = b->trie[c].sibling;
        if (c < 0) {
            if (grow((void **)&b->trie, &b->trie_cap, b->trie_n + 1, sizeof *b->trie)) return AC_ERR_NOMEM;
            c = (int32_t)b->trie_n++;
            b->trie[c] = (trie_node){NONE, NONE, NONE, NONE, p[i]};
            if (node < 0) b->root[p[i]] = c;
            else if (last < 0) b->trie[node].child = c;
            else b->trie[last].sibling = c;
        }
        node = c;
    }
    if (b->added_normalized[k]) b->trie[node].norm = (int32_t)k;
    else b->trie[node].raw = (int32_t)k;
    return AC_OK;
}

ac_status ac_bpe_end(ac_bpe *b, const char *name)
{
    int32_t max = -1;
    for (size_t i = 0; i < b->vocab.n; i++) max = b->vocab.v[i].id > max ? b->vocab.v[i].id : max;
    for (size_t i = 0; i < b->added.n; i++) max = b->added.v[i].id > max ? b->added.v[i].id : max;
    b->size = max + 1;
    b->vocab_of_id = ac_malloc((size_t)b->size * sizeof *b->vocab_of_id);
    b->added_of_id = ac_malloc((size_t)b->size * sizeof *b->added_of_id);
    if (!b->vocab_of_id || !b->added_of_id) return AC_ERR_NOMEM;
    memset(b->vocab_of_id, 0xFF, (size_t)b->size * sizeof *b->vocab_of_id);
    memset(b->added_of_id, 0xFF, (size_t)b->size * sizeof *b->added_of_id);
    for (size_t i = 0; i < b->vocab.n; i++) {
        int32_t id = b->vocab.v[i].id, *o = &b->vocab_of_id[id];
        if (*o >= 0)
            return ac_error(AC_ERR_FORMAT, "%s: id %d belongs to two vocabulary tokens, '%s' and '%s'", name,
                            (int)id, b->pool + b->vocab.v[*o].off, b->pool + b->vocab.v[i].off);
        *o = (int32_t)i;
    }
    AC_TRY(tab_build(b, &b->added_tab, &b->added, name, "added token"));
    for (size_t i = 0; i < b->added.n; i++) {
        int32_t id = b->added.v[i].id, *o = &b->added_of_id[id];
        if (*o >= 0)
            return ac_error(AC_ERR_FORMAT, "%s: id %d belongs to two added tokens, '%s' and '%s'", name, (int)id,
                            b->pool + b->added.v[*o].off, b->pool + b->added.v[i].off);
        *o = (int32_t)i;
        /* a normalized token is looked for in NFC text, so in NFC itself */
        const span *t = &b->added.v[i];
        utf8proc_uint8_t *nfc = NULL;
        utf8proc_ssize_t m = b->added_normalized[i]
                                 ? utf8proc_map((const utf8proc_uint8_t *)b->pool + t->off, t->len, &nfc,
                                                UTF8PROC_STABLE | UTF8PROC_COMPOSE)
                                 : 0;
        if (m < 0) return ac_error(AC_ERR_FORMAT, "%s: added token '%s': %s", name, b->pool + t->off, utf8proc_errmsg(m));
        ac_status st = nfc ? (m ? trie_insert(b, i, nfc, (size_t)m) : AC_OK)
                           : trie_insert(b, i, (const uint8_t *)b->pool + t->off, t->len);
        free(nfc);
        AC_TRY(st);
    }
    for (int c = 0; c < 256; c++) {
        char sym[4];
        b->byte_id[c] = vocab_id(b, sym, ac_utf8_put(ac_byte_to_char((uint8_t)c), sym));
    }
    for (uint32_t cp = 0; cp < 0x144; cp++) b->char_byte[cp] = (int16_t)ac_char_to_byte(cp);
    return AC_OK;
}

void ac_bpe_free(ac_bpe *b)
{
    if (!b) return;
    free(b->pool);
    free(b->vocab.v);
    free(b->added.v);
    free(b->added_special);
    free(b->added_normalized);
    free(b->vocab_tab.slot);
    free(b->added_tab.slot);
    free(b->vocab_of_id);
    free(b->added_of_id);
    free(b->merge_key);
    free(b->merge_rank);
    free(b->merge_new);
    free(b->trie);
    free(b);
}

/* ---- lookups ------------------------------------------------------------ */

int ac_bpe_size(const ac_bpe *b) { return b ? b->size : 0; }

static const span *token_of(const ac_bpe *b, int id)
{
    if (!b || id < 0 || id >= b->size) return NULL;
    if (b->added_of_id[id] >= 0) return &b->added.v[b->added_of_id[id]];
    if (b->vocab_of_id[id] >= 0) return &b->vocab.v[b->vocab_of_id[id]];
    return NULL;
}

const char *ac_bpe_token(const ac_bpe *b, int id)
{
    const span *s = token_of(b, id);
    return s ? b->pool + s->off : NULL;
}

int ac_bpe_token_to_id(const ac_bpe *b, const char *token)
{
    if (!b || !token) return NONE;
    size_t n = strlen(token);
    int32_t k = tab_find(b, &b->added_tab, &b->added, token, n);
    return k >= 0 ? b->added.v[k].id : vocab_id(b, token, n);
}

int ac_bpe_is_special(const ac_bpe *b, int id)
{
    return b && id >= 0 && id < b->size && b->added_of_id[id] >= 0 && b->added_special[b->added_of_id[id]];
}

/* ---- encoding ----------------------------------------------------------- */

typedef struct {
    int32_t rank, pos, new_id;
} merge_at;

/* A word one call has merged: its bytes and its ids in the cache pools. */
typedef struct {
    size_t key, ids;
    uint32_t len, n_ids;
} cached_word;

/* What one call needs: the output, the merge scratch and a cache of
 * words already merged. */
typedef struct {
    int *ids;
    size_t n, cap;
    int32_t *sym, *prev, *next;
    size_t sym_cap, link_cap;
    merge_at *heap;
    size_t heap_n, heap_cap;
    char *keys; /* cached words, back to back */
    size_t keys_n, keys_cap;
    int *cached; /* their ids, back to back */
    size_t cached_n, cached_cap;
    cached_word *words;
    size_t n_words;
    int32_t *slot; /* open addressing over words, 2 * CACHE_WORDS */
} encoder;

static ac_status push_id(encoder *e, int id)
{
    if (grow((void **)&e->ids, &e->cap, e->n + 1, sizeof *e->ids)) return AC_ERR_NOMEM;
    e->ids[e->n++] = id;
    return AC_OK;
}

static int heap_less(const merge_at *a, const merge_at *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static ac_status heap_push(encoder *e, merge_at m)
{
    if (grow((void **)&e->heap, &e->heap_cap, e->heap_n + 1, sizeof *e->heap)) return AC_ERR_NOMEM;
    size_t i = e->heap_n++;
    while (i > 0 && heap_less(&m, &e->heap[(i - 1) / 2])) {
        e->heap[i] = e->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e->heap[i] = m;
    return AC_OK;
}

static merge_at heap_pop(encoder *e)
{
    merge_at top = e->heap[0], last = e->heap[--e->heap_n];
    size_t i = 0, n = e->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(&e->heap[c + 1], &e->heap[c])) c++;
        if (!heap_less(&e->heap[c], &last)) break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (n) e->heap[i] = last;
    return top;
}

/* The merge of symbols L and R as a heap entry at position POS; rank -1
 * when there is none. */
static merge_at merge_of(const ac_bpe *b, int32_t l, int32_t r, int32_t pos)
{
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    if (!b->merge_key) return (merge_at){NONE, pos, NONE}; /* no merges at all */
    size_t i = merge_slot(b, key);
    if (b->merge_key[i] != key) return (merge_at){NONE, pos, NONE};
    return (merge_at){b->merge_rank[i], pos, b->merge_new[i]};
}

static ac_status push_pair(const ac_bpe *b, encoder *e, int32_t pos)
{
    int32_t r = e->next[pos];
    if (r < 0) return AC_OK;
    merge_at m = merge_of(b, e->sym[pos], e->sym[r], pos);
    return m.rank < 0 ? AC_OK : heap_push(e, m);
}

/* Lowest rank first, leftmost among equals, over a linked list of the
 * word's symbols: n log n however long the word. */
static ac_status merge_word(const ac_bpe *b, encoder *e, const uint8_t *w, size_t n)
{
    size_t cap = e->link_cap;
    if (grow((void **)&e->sym, &e->sym_cap, n, sizeof *e->sym) ||
        grow((void **)&e->prev, &cap, n, sizeof *e->prev) ||
        grow((void **)&e->next, &e->link_cap, n, sizeof *e->next))
        return AC_ERR_NOMEM;
    int32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = b->byte_id[w[i]];
        if (id < 0) continue; /* a byte with no symbol is dropped, as HF does without unk_token */
        e->sym[m] = id;
        e->prev[m] = m - 1;
        e->next[m] = m + 1;
        m++;
    }
    if (m == 0) return AC_OK;
    e->next[m - 1] = NONE;
    e->heap_n = 0;
    for (int32_t i = 0; i + 1 < m; i++) AC_TRY(push_pair(b, e, i));
    while (e->heap_n) {
        merge_at top = heap_pop(e);
        int32_t l = top.pos, r = e->next[l];
        if (e->sym[l] < 0 || r < 0) continue;
        merge_at now = merge_of(b, e->sym[l], e->sym[r], l);
        if (now.new_id != top.new_id || now.rank != top.rank) continue; /* stale */
        e->sym[l] = top.new_id;
        e->sym[r] = NONE;
        e->next[l] = e->next[r];
        if (e->next[r] >= 0) e->prev[e->next[r]] = l;
        if (e->prev[l] >= 0) AC_TRY(push_pair(b, e, e->prev[l]));
        AC_TRY(push_pair(b, e, l));
    }
    for (int32_t i = 0; i >= 0; i = e->next[i]) AC_TRY(push_id(e, e->sym[i]));
    return AC_OK;
}

/* A word of the byte-level alphabet that is a whole vocabulary entry. */
static int32_t whole_word(const ac_bpe *b, const uint8_t *w, size_t n)
{
    char small[4 * CACHE_WORD];
    char *s = n <= CACHE_WORD ? small : ac_malloc(4 * n);
    if (!s) return NONE;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += ac_utf8_put(ac_byte_to_char(w[i]), s + k);
    int32_t id = vocab_id(b, s, k);
    if (s != small) free(s);
    return id;
}

static ac_status encode_word(const ac_bpe *b, encoder *e, const char *w, size_t n)
{
    if (b->ignore_merges) {
        int32_t id = whole_word(b, (const uint8_t *)w, n);
        if (id >= 0) return push_id(e, id);
    }
    if (n > CACHE_WORD) return merge_word(b, e, (const uint8_t *)w, n);
    if (!e->slot) {
        e->slot = ac_malloc(2 * CACHE_WORDS * sizeof *e->slot);
        e->words = ac_malloc(CACHE_WORDS * sizeof *e->words);
        if (!e->slot || !e->words) return AC_ERR_NOMEM;
        memset(e->slot, 0xFF, 2 * CACHE_WORDS * sizeof *e->slot);
    }
    size_t mask = 2 * CACHE_WORDS - 1, i = (size_t)hash_bytes(w, n) & mask;
    for (; e->slot[i] >= 0; i = (i + 1) & mask) {
        const cached_word *c = &e->words[e->slot[i]];
        if (c->len != n || memcmp(e->keys + c->key, w, n) != 0) continue;
        for (uint32_t k = 0; k < c->n_ids; k++) AC_TRY(push_id(e, e->cached[c->ids + k]));
        return AC_OK;
    }
    size_t before = e->n;
    AC_TRY(merge_word(b, e, (const uint8_t *)w, n));
    if (e->n_words == CACHE_WORDS) return AC_OK;
    size_t got = e->n - before;
    if (grow((void **)&e->keys, &e->keys_cap, e->keys_n + n, 1) ||
        grow((void **)&e->cached, &e->cached_cap, e->cached_n + got, sizeof *e->cached))
        return AC_ERR_NOMEM;
    memcpy(e->keys + e->keys_n, w, n);
    if (got) memcpy(e->cached + e->cached_n, e->ids + before, got * sizeof *e->cached); /* none: bytes without symbols */
    e->words[e->n_words] = (cached_word){e->keys_n, e->cached_n, (uint32_t)n, (uint32_t)got};
    e->slot[i] = (int32_t)e->n_words++;
    e->keys_n += n;
    e->cached_n += got;
    return AC_OK;
}

/* Text with no added tokens in it: the Qwen2 pieces, each merged. */
static ac_status encode_plain(const ac_bpe *b, encoder *e, const char *s, size_t n)
{
    while (n) {
        size_t k = ac_qwen2_piece(s, n);
        AC_TRY(encode_word(b, e, s, k));
        s += k, n -= k;
    }
    return AC_OK;
}

/* The longest added token of the kind (NORM or raw) at S, its index or -1,
 * its length in *LEN. */
static int32_t added_at(const ac_bpe *b, const uint8_t *s, size_t n, int norm, size_t *len)
{
    int32_t node = b->root[s[0]], found = NONE;
    for (size_t i = 0;;) {
        int32_t k = norm ? b->trie[node].norm : b->trie[node].raw;
        if (k >= 0) found = k, *len = i + 1;
        if (++i == n) break;
        node = b->trie[node].child;
        while (node >= 0 && b->trie[node].byte != s[i]) node = b->trie[node].sibling;
        if (node < 0) break;
    }
    return found;
}

static ac_status encode_normalized(const ac_bpe *b, encoder *e, const char *s, size_t n);

/* Cuts the added tokens of one kind out of S; what lies between goes on
 * to NFC and the pre-tokenizer (raw kind) or to the pre-tokenizer. */
static ac_status split_added(const ac_bpe *b, encoder *e, const char *s, size_t n, int norm)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        size_t len = 0;
        int32_t k = b->root[u[i]] >= 0 ? added_at(b, u + i, n - i, norm, &len) : NONE;
        if (k < 0) {
            i++;
            continue;
        }
        if (i > start) AC_TRY(norm ? encode_plain(b, e, s + start, i - start)
                                   : encode_normalized(b, e, s + start, i - start));
        AC_TRY(push_id(e, b->added.v[k].id));
        i += len;
        start = i;
    }
    if (n > start) AC_TRY(norm ? encode_plain(b, e, s + start, n - start) : encode_normalized(b, e, s + start, n - start));
    return AC_OK;
}

static ac_status encode_normalized(const ac_bpe *b, encoder *e, const char *s, size_t n)
{
    utf8proc_uint8_t *nfc = NULL;
    utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &nfc,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (m < 0) return ac_error(AC_ERR_ARG, "BPE encode: NFC normalization failed: %s", utf8proc_errmsg(m));
    ac_status st = split_added(b, e, (const char *)nfc, (size_t)m, 1);
    free(nfc);
    return st;
}

ac_status ac_bpe_encode(const ac_bpe *b, const char *text, size_t len, int **ids, size_t *n)
{
    if (!ids || !n) return ac_error(AC_ERR_ARG, "ac_bpe_encode: no output pointer");
    *ids = NULL;
    *n = 0;
    if (!b || (len && !text)) return ac_error(AC_ERR_ARG, "ac_bpe_encode: no tokenizer or no text");
    size_t bad = ac_utf8_invalid_at((const uint8_t *)text, len);
    if (bad < len) return ac_error(AC_ERR_ARG, "BPE encode: the text is not valid UTF-8 (byte %zu)", bad);
    encoder e = {0};
    ac_status st = split_added(b, &e, text, len, 0);
    free(e.sym);
    free(e.prev);
    free(e.next);
    free(e.heap);
    free(e.keys);
    free(e.cached);
    free(e.words);
    free(e.slot);
    if (st != AC_OK || e.n == 0) {
        free(e.ids);
        return st;
    }
    *ids = e.ids;
    *n = e.n;
    return AC_OK;
}

/* ---- decoding ----------------------------------------------------------- */

/* Length of the maximal part of a UTF-8 sequence at S (not a valid
 * character) that one U+FFFD replaces, as Rust's from_utf8_lossy does. */
static size_t invalid_run(const uint8_t *s, size_t n)
{
    uint8_t c = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) need = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 1;
    size_t i = 1;
    if (i < n && s[i] >= lo && s[i] <= hi)
        for (i++; i < need && i < n && (s[i] & 0xC0) == 0x80;) i++;
    return i;
}

/* The bytes of token T: its symbols mapped back when every character is
 * one of the alphabet, else its own UTF-8 (HF's ByteLevel decoder). */
static size_t token_bytes(const ac_bpe *b, const span *t, uint8_t *out)
{
    const uint8_t *p = (const uint8_t *)b->pool + t->off;
    size_t o = 0;
    for (size_t i = 0, k; i < t->len; i += k) {
        uint32_t cp = 0;
        k = ac_utf8_char(p + i, t->len - i, &cp);
        int byte = k && cp < 0x144 ? b->char_byte[cp] : -1;
        if (byte < 0) {
            memcpy(out, p, t->len);
            return t->len;
        }
        out[o++] = (uint8_t)byte;
    }
    return o;
}

ac_status ac_bpe_decode(const ac_bpe *b, const int *ids, size_t n, int keep_special, char **text, size_t *len)
{
    if (!text) return ac_error(AC_ERR_ARG, "ac_bpe_decode: no output pointer");
    *text = NULL;
    if (len) *len = 0;
    if (!b || (n && !ids)) return ac_error(AC_ERR_ARG, "ac_bpe_decode: no tokenizer or no ids");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const span *t = token_of(b, ids[i]);
        if (!t)
            return ac_error(AC_ERR_ARG, "BPE decode: id %d at position %zu is no token (ids are 0..%d)", ids[i], i,
                            b->size - 1);
        total += t->len;
    }
    uint8_t *raw = ac_malloc(total + 1);
    if (!raw) return AC_ERR_NOMEM;
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        if (keep_special || !ac_bpe_is_special(b, ids[i])) r += token_bytes(b, token_of(b, ids[i]), raw + r);
    /* each invalid run (at least one byte) becomes 3 bytes */
    char *out = ac_malloc(3 * r + 1);
    if (!out) {
        free(raw);
        return AC_ERR_NOMEM;
    }
    size_t o = 0;
    for (size_t i = 0, k; i < r; i += k) {
        k = ac_utf8_char(raw + i, r - i, NULL);
        if (k) {
            memcpy(out + o, raw + i, k);
            o += k;
        } else {
            k = invalid_run(raw + i, r - i);
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
        }
    }
    free(raw);
    out[o] = 0;
    *text = out;
    if (len) *len = o;
    return AC_OK;
}
