/*
 * The libpq peer of the qail benchmark harness.
 *
 *   libpq_bench CONNINFO WORKLOAD N BATCH
 *
 * Connects, prepares nothing before the clock starts (statement preparation is measured, as
 * for the Rust drivers), runs WORKLOAD, and prints one line:
 *
 *   queries=… rows=… wall_ns=… cpu_ns=… sys_ns=… minflt=… p50_ns=… p99_ns=… max_rss_kib=…
 *   rss_anon_kib=… rss_file_kib=…
 *
 * cpu_ns is getrusage(RUSAGE_SELF) user+system time around the workload (all threads),
 * sys_ns its system part, minflt the minor page faults; max_rss_kib is the process's peak,
 * rss_anon_kib and rss_file_kib its anonymous and file pages resident at the end.
 * Parameters and results are binary. Sequential workloads use PQexecPrepared; pipelined
 * ones use pipeline mode (PostgreSQL 14+ libpq). Values are decoded into C values: integers,
 * floats, bools, times and uuids by value, text copied into buffers, numeric into a scaled
 * int64. jsonb is copied as text, not parsed (C has no JSON value type to build).
 *
 * Batches stay far below the socket buffer sizes (≤ 1,000 small Bind+Execute messages), so
 * writing a whole batch before reading cannot deadlock.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "queries.h"

#define POOL_TASKS 10
#define INSERT_BATCH 100

typedef struct {
    uint64_t queries;
    uint64_t rows;
} counts_t;

static volatile uint64_t sink; /* keeps decoded values observable */

static void die(PGconn *conn, const char *what) {
    fprintf(stderr, "libpq_bench: %s: %s", what, conn ? PQerrorMessage(conn) : "\n");
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* The system (kernel) part of cpu_ns. */
static uint64_t sys_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

/* Minor page faults so far. */
static uint64_t minflt(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_minflt;
}

#include "wire.h"

static void copy_text(char *dst, size_t cap, const char *src, int len) {
    size_t n = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void prepare(PGconn *conn, const char *sql, int n, const Oid *types) {
    PGresult *r = PQprepare(conn, "s", sql, n, types);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die(conn, "prepare");
    PQclear(r);
}

static PGresult *exec1(PGconn *conn, int n, const char *const *vals, const int *lens,
                       const int *fmts) {
    PGresult *r = PQexecPrepared(conn, "s", n, vals, lens, fmts, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
        die(conn, "query");
    return r;
}

/* Reads one id,name row set; returns its row count. */
static uint64_t decode_id_name(PGresult *r) {
    char name[64];
    int n = PQntuples(r);
    for (int i = 0; i < n; i++) {
        sink += get64(PQgetvalue(r, i, 0));
        copy_text(name, sizeof name, PQgetvalue(r, i, 1), PQgetlength(r, i, 1));
        sink += (uint64_t)name[0];
    }
    return (uint64_t)n;
}

static uint64_t *lat;
static uint64_t lat_n;

static void record(uint64_t since) { lat[lat_n++] = now_ns() - since; }

static counts_t point(PGconn *conn, uint64_t n) {
    const Oid types[1] = {20};
    prepare(conn, POINT_SQL, 1, types);
    counts_t c = {0, 0};
    char buf[8];
    const char *vals[1] = {buf};
    const int lens[1] = {8}, fmts[1] = {1};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t = now_ns();
        put64(buf, i % 10000 + 1);
        PGresult *r = exec1(conn, 1, vals, lens, fmts);
        if (PQntuples(r) != 1) die(NULL, "point lookup found no row\n");
        c.rows += decode_id_name(r);
        PQclear(r);
        record(t);
        c.queries++;
    }
    return c;
}

static void expect_sync(PGconn *conn) {
    PGresult *r = PQgetResult(conn);
    if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) die(conn, "expected pipeline sync");
    PQclear(r);
}

/* Sends `batch` prepared queries with one int8 parameter from `param(i)`, with a Sync after
 * each (`per_query`) or one after the batch, and reads the results. */
static counts_t pipelined(PGconn *conn, uint64_t first, uint64_t batch,
                          uint64_t (*param)(uint64_t), int per_query) {
    counts_t c = {0, 0};
    char buf[8];
    const char *vals[1] = {buf};
    const int lens[1] = {8}, fmts[1] = {1};
    for (uint64_t k = 0; k < batch; k++) {
        put64(buf, param(first + k));
        if (!PQsendQueryPrepared(conn, "s", 1, vals, lens, fmts, 1)) die(conn, "send");
        if (per_query && !PQpipelineSync(conn)) die(conn, "pipeline sync");
    }
    if (!per_query && !PQpipelineSync(conn)) die(conn, "pipeline sync");
    for (uint64_t k = 0; k < batch; k++) {
        PGresult *r = PQgetResult(conn);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) die(conn, "pipelined query");
        c.rows += decode_id_name(r);
        c.queries++;
        PQclear(r);
        if ((r = PQgetResult(conn)) != NULL) die(conn, "expected end of query results");
        if (per_query) expect_sync(conn);
    }
    if (!per_query) expect_sync(conn);
    return c;
}

static uint64_t limit_param(uint64_t i) { return i % 10 + 1; }
static uint64_t id_param(uint64_t i) { return i % 10000 + 1; }

static counts_t pipeline(PGconn *conn, uint64_t n, uint64_t batch, int per_query) {
    const Oid types[1] = {20};
    prepare(conn, PIPELINE_SQL, 1, types);
    if (!PQenterPipelineMode(conn)) die(conn, "enter pipeline mode");
    counts_t c = {0, 0};
    for (uint64_t b = 0; b < (n + batch - 1) / batch; b++) {
        counts_t d = pipelined(conn, b * batch, batch, limit_param, per_query);
        c.queries += d.queries;
        c.rows += d.rows;
    }
    return c;
}

static counts_t join(PGconn *conn, uint64_t n) {
    prepare(conn, JOIN_SQL, 0, NULL);
    counts_t c = {0, 0};
    char id[16], name[64], origin[64], dest[64], op[64];
    for (uint64_t q = 0; q < n; q++) {
        uint64_t t = now_ns();
        PGresult *r = exec1(conn, 0, NULL, NULL, NULL);
        int rows = PQntuples(r);
        for (int i = 0; i < rows; i++) {
            memcpy(id, PQgetvalue(r, i, 0), 16);
            copy_text(name, sizeof name, PQgetvalue(r, i, 1), PQgetlength(r, i, 1));
            char *texts[3] = {origin, dest, op};
            for (int k = 0; k < 3; k++) {
                if (PQgetisnull(r, i, 2 + k)) texts[k][0] = 0;
                else copy_text(texts[k], 64, PQgetvalue(r, i, 2 + k), PQgetlength(r, i, 2 + k));
            }
            int64_t dep = PQgetisnull(r, i, 5) ? -1 : (int64_t)get64(PQgetvalue(r, i, 5));
            int32_t dur = PQgetisnull(r, i, 6) ? -1 : (int32_t)get32(PQgetvalue(r, i, 6));
            int64_t price = PQgetisnull(r, i, 7) ? -1 : numeric_cents(PQgetvalue(r, i, 7));
            sink += (uint64_t)(id[0] + name[0] + origin[0] + dest[0] + op[0]) +
                    (uint64_t)dep + (uint64_t)dur + (uint64_t)price;
        }
        PQclear(r);
        record(t);
        c.queries++;
        c.rows += (uint64_t)rows;
    }
    return c;
}

static counts_t wide(PGconn *conn, uint64_t n) {
    const Oid types[1] = {20};
    prepare(conn, WIDE_SQL, 1, types);
    counts_t c = {0, 0};
    char buf[8], text[64], uuid[16], json[256];
    const char *vals[1] = {buf};
    const int lens[1] = {8}, fmts[1] = {1};
    for (uint64_t q = 0; q < n; q++) {
        uint64_t t = now_ns();
        put64(buf, (q % 49) * 1000);
        PGresult *r = exec1(conn, 1, vals, lens, fmts);
        int rows = PQntuples(r);
        for (int i = 0; i < rows; i++) {
            int64_t id = (int64_t)get64(PQgetvalue(r, i, 0));
            int32_t i4 = (int32_t)get32(PQgetvalue(r, i, 1));
            int64_t i8 = (int64_t)get64(PQgetvalue(r, i, 2));
            uint64_t bits = get64(PQgetvalue(r, i, 3));
            double f8;
            memcpy(&f8, &bits, 8);
            int b = PQgetvalue(r, i, 4)[0] != 0;
            copy_text(text, sizeof text, PQgetvalue(r, i, 5), PQgetlength(r, i, 5));
            int64_t ts = (int64_t)get64(PQgetvalue(r, i, 6));
            memcpy(uuid, PQgetvalue(r, i, 7), 16);
            int64_t num = PQgetisnull(r, i, 8) ? -1 : numeric_cents(PQgetvalue(r, i, 8));
            /* jsonb binary: a version byte (1), then the JSON text. */
            copy_text(json, sizeof json, PQgetvalue(r, i, 9) + 1, PQgetlength(r, i, 9) - 1);
            sink += (uint64_t)(id + i4 + i8 + b + ts + num) + (uint64_t)f8 +
                    (uint64_t)(text[0] + uuid[0] + json[0]);
        }
        PQclear(r);
        record(t);
        c.queries++;
        c.rows += (uint64_t)rows;
    }
    return c;
}

static counts_t params16(PGconn *conn, uint64_t n) {
    Oid types[16];
    char bufs[16][4];
    const char *vals[16];
    int lens[16], fmts[16];
    for (int k = 0; k < 16; k++) {
        types[k] = 23;
        vals[k] = bufs[k];
        lens[k] = 4;
        fmts[k] = 1;
    }
    prepare(conn, PARAMS16_SQL, 16, types);
    counts_t c = {0, 0};
    for (uint64_t q = 0; q < n; q++) {
        uint64_t t = now_ns();
        uint32_t base = (uint32_t)(q % 9000) + 1;
        for (uint32_t k = 0; k < 16; k++) put32(bufs[k], base + k * 37);
        PGresult *r = exec1(conn, 16, vals, lens, fmts);
        c.rows += decode_id_name(r);
        PQclear(r);
        record(t);
        c.queries++;
    }
    return c;
}

typedef struct {
    PGconn *conn;
    uint64_t task, batches, batch;
    counts_t counts;
} task_t;

static void *pool_task(void *arg) {
    task_t *t = arg;
    for (uint64_t b = 0; b < t->batches; b++) {
        counts_t d =
            pipelined(t->conn, (t->task * t->batches + b) * t->batch, t->batch, id_param, 0);
        t->counts.queries += d.queries;
        t->counts.rows += d.rows;
    }
    return NULL;
}

/* Builds insert row `n`'s parameters into the given buffers. */
static void insert_row(uint64_t n, char *id, char *name, char *qty, char *price) {
    put64(id, n);
    snprintf(name, 32, "Ferry ticket %llu", (unsigned long long)n);
    put32(qty, (uint32_t)(n % 17));
    double p = (double)(n % 1000) * 0.25;
    uint64_t bits;
    memcpy(&bits, &p, 8);
    put64(price, bits);
}

typedef struct {
    char id[8], name[32], qty[4], price[8];
} insert_params_t;

static counts_t insert(PGconn *conn, insert_params_t *rows, uint64_t batches) {
    const Oid types[4] = {20, 25, 23, 701};
    prepare(conn, INSERT_SQL, 4, types);
    if (!PQenterPipelineMode(conn)) die(conn, "enter pipeline mode");
    counts_t c = {0, 0};
    const int fmts[4] = {1, 1, 1, 1};
    for (uint64_t b = 0; b < batches; b++) {
        for (uint64_t k = 0; k < INSERT_BATCH; k++) {
            insert_params_t *p = &rows[b * INSERT_BATCH + k];
            const char *vals[4] = {p->id, p->name, p->qty, p->price};
            const int lens[4] = {8, (int)strlen(p->name), 4, 8};
            if (!PQsendQueryPrepared(conn, "s", 4, vals, lens, fmts, 1)) die(conn, "send");
        }
        if (!PQpipelineSync(conn)) die(conn, "pipeline sync");
        for (uint64_t k = 0; k < INSERT_BATCH; k++) {
            PGresult *r = PQgetResult(conn);
            if (PQresultStatus(r) != PGRES_COMMAND_OK) die(conn, "pipelined insert");
            c.rows += strtoull(PQcmdTuples(r), NULL, 10);
            c.queries++;
            PQclear(r);
            if (PQgetResult(conn) != NULL) die(conn, "expected end of insert results");
        }
        PGresult *r = PQgetResult(conn);
        if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) die(conn, "expected pipeline sync");
        PQclear(r);
    }
    return c;
}

static counts_t copy_in(PGconn *conn, char **texts, uint64_t batches) {
    counts_t c = {0, 0};
    for (uint64_t b = 0; b < batches; b++) {
        PGresult *r = PQexec(conn, COPY_SQL);
        if (PQresultStatus(r) != PGRES_COPY_IN) die(conn, "COPY");
        PQclear(r);
        if (PQputCopyData(conn, texts[b], (int)strlen(texts[b])) != 1) die(conn, "copy data");
        if (PQputCopyEnd(conn, NULL) != 1) die(conn, "copy end");
        r = PQgetResult(conn);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) die(conn, "COPY result");
        c.rows += strtoull(PQcmdTuples(r), NULL, 10);
        c.queries++;
        PQclear(r);
        while ((r = PQgetResult(conn)) != NULL) PQclear(r);
    }
    return c;
}

/* One row of the bulk workload, built before the clock (as the Rust drivers' rows are). */
typedef struct {
    long long id;
    char name[32];
    int qty;
    char note[32]; /* empty: NULL */
} bulk_row_t;

static bulk_row_t *build_bulk(uint64_t n) {
    bulk_row_t *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) die(NULL, "out of memory\n");
    for (uint64_t i = 0; i < n; i++) {
        rows[i].id = (long long)i;
        snprintf(rows[i].name, sizeof rows[i].name, "Bulk row %llu", (unsigned long long)i);
        rows[i].qty = (int)(i % 17);
        if (i % 3 == 0)
            snprintf(rows[i].note, sizeof rows[i].note, "note %llu", (unsigned long long)i);
    }
    return rows;
}

/* `bulk_copy`: one COPY FROM STDIN (text format), the rows formatted inside the clock into a
 * 64 KiB buffer and sent with PQputCopyData each time it fills. */
static counts_t bulk_copy(PGconn *conn, const bulk_row_t *rows, uint64_t n) {
    enum { CHUNK = 65536 };
    static char buf[CHUNK + 128];
    counts_t c = {0, 0};
    PGresult *r = PQexec(conn, BULK_COPY_SQL);
    if (PQresultStatus(r) != PGRES_COPY_IN) die(conn, "COPY");
    PQclear(r);
    size_t len = 0;
    for (uint64_t i = 0; i < n; i++) {
        const bulk_row_t *b = &rows[i];
        len += (size_t)snprintf(buf + len, 128, "%lld\t%s\t%d\t%s\n", b->id, b->name, b->qty,
                                b->note[0] ? b->note : "\\N");
        if (len >= CHUNK) {
            if (PQputCopyData(conn, buf, (int)len) != 1) die(conn, "copy data");
            len = 0;
        }
    }
    if (len && PQputCopyData(conn, buf, (int)len) != 1) die(conn, "copy data");
    if (PQputCopyEnd(conn, NULL) != 1) die(conn, "copy end");
    r = PQgetResult(conn);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die(conn, "COPY result");
    c.rows = strtoull(PQcmdTuples(r), NULL, 10);
    c.queries = 1;
    PQclear(r);
    while ((r = PQgetResult(conn)) != NULL) PQclear(r);
    return c;
}

static PGconn *connect_db(const char *conninfo) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) die(conn, "connect");
    return conn;
}

static void exec_simple(PGconn *conn, const char *sql) {
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die(conn, sql);
    PQclear(r);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t percentile(uint64_t pct) {
    if (lat_n == 0) return 0;
    uint64_t rank = (lat_n * pct + 99) / 100;
    if (rank < 1) rank = 1;
    return lat[rank - 1];
}

/* Resident memory in KiB from /proc/self/status: the peak (VmHWM; ru_maxrss is inherited
 * from the parent across fork + exec) and the anonymous and file pages resident now (-1 when
 * unknown). */
typedef struct {
    long peak, anon, file;
} resident_t;

static resident_t resident_kib(void) {
    resident_t r = {-1, -1, -1};
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmHWM:", 6)) r.peak = strtol(line + 6, NULL, 10);
        if (!strncmp(line, "RssAnon:", 8)) r.anon = strtol(line + 8, NULL, 10);
        if (!strncmp(line, "RssFile:", 8)) r.file = strtol(line + 8, NULL, 10);
    }
    if (f) fclose(f);
    if (r.peak < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r.peak = ru.ru_maxrss;
    }
    return r;
}

static void report(counts_t c, uint64_t wall, uint64_t cpu, uint64_t sys, uint64_t faults) {
    qsort(lat, lat_n, sizeof *lat, cmp_u64);
    resident_t r = resident_kib();
    printf("queries=%llu rows=%llu wall_ns=%llu cpu_ns=%llu sys_ns=%llu minflt=%llu p50_ns=%llu "
           "p99_ns=%llu max_rss_kib=%ld",
           (unsigned long long)c.queries, (unsigned long long)c.rows,
           (unsigned long long)wall, (unsigned long long)cpu, (unsigned long long)sys,
           (unsigned long long)faults, (unsigned long long)percentile(50),
           (unsigned long long)percentile(99), r.peak);
    if (r.anon >= 0) printf(" rss_anon_kib=%ld", r.anon);
    if (r.file >= 0) printf(" rss_file_kib=%ld", r.file);
    printf("\n");
}

/* The rows of `batches` insert batches as binary parameters and as COPY text, built before
 * the clock starts (as the Rust drivers' are). */
static void build_inserts(uint64_t batches, insert_params_t **rows_out, char ***texts_out) {
    insert_params_t *rows = calloc(batches * INSERT_BATCH, sizeof *rows);
    char **texts = calloc(batches, sizeof *texts);
    if (!rows || !texts) die(NULL, "out of memory\n");
    for (uint64_t b = 0; b < batches; b++) {
        texts[b] = calloc(INSERT_BATCH, 64);
        if (!texts[b]) die(NULL, "out of memory\n");
        size_t len = 0;
        for (uint64_t k = 0; k < INSERT_BATCH; k++) {
            uint64_t i = b * INSERT_BATCH + k;
            insert_params_t *p = &rows[i];
            insert_row(i, p->id, p->name, p->qty, p->price);
            len += (size_t)snprintf(texts[b] + len, 64, "%llu\t%s\t%llu\t%g\n",
                                    (unsigned long long)i, p->name,
                                    (unsigned long long)(i % 17), (double)(i % 1000) * 0.25);
        }
    }
    *rows_out = rows;
    *texts_out = texts;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: libpq_bench CONNINFO WORKLOAD N BATCH\n");
        return 2;
    }
    const char *conninfo = argv[1], *w = argv[2];
    uint64_t n = strtoull(argv[3], NULL, 10), batch = strtoull(argv[4], NULL, 10);
    lat = calloc(n > 10000 ? n : 10000, sizeof *lat);
    if (!lat) die(NULL, "out of memory\n");

    int is_insert = !strcmp(w, "insert"), is_copy = !strcmp(w, "copy");
    insert_params_t *rows = NULL;
    char **texts = NULL;
    PGconn *conns[POOL_TASKS];
    task_t tasks[POOL_TASKS];
    PGconn *conn = NULL;
    if (!strcmp(w, "pool10")) {
        for (int k = 0; k < POOL_TASKS; k++) {
            conns[k] = connect_db(conninfo);
            tasks[k] = (task_t){conns[k], (uint64_t)k, n, batch, {0, 0}};
        }
    } else {
        conn = connect_db(conninfo);
    }
    if (is_insert || is_copy) {
        exec_simple(conn, "TRUNCATE bench_insert");
        build_inserts(n, &rows, &texts);
    }
    int is_bulk_copy = !strcmp(w, "bulk_copy");
    bulk_row_t *bulk = NULL;
    if (is_bulk_copy) {
        exec_simple(conn, "TRUNCATE bench_bulk");
        bulk = build_bulk(n);
    }

    uint64_t wall0 = now_ns(), cpu0 = cpu_ns(), sys0 = sys_ns(), flt0 = minflt();
    counts_t c = {0, 0};
    if (!strcmp(w, "point")) c = point(conn, n);
    else if (!strcmp(w, "pipeline")) c = pipeline(conn, n, batch, 1);
    else if (!strcmp(w, "pipeline_atomic")) c = pipeline(conn, n, batch, 0);
    else if (!strcmp(w, "join")) c = join(conn, n);
    else if (!strcmp(w, "wide")) c = wide(conn, n);
    else if (!strcmp(w, "params16")) c = params16(conn, n);
    else if (is_insert) c = insert(conn, rows, n);
    else if (is_copy) c = copy_in(conn, texts, n);
    else if (is_bulk_copy) c = bulk_copy(conn, bulk, n);
    else if (!strcmp(w, "pool10")) {
        pthread_t th[POOL_TASKS];
        for (int k = 0; k < POOL_TASKS; k++) {
            const Oid types[1] = {20};
            prepare(conns[k], POINT_SQL, 1, types);
            if (!PQenterPipelineMode(conns[k])) die(conns[k], "enter pipeline mode");
        }
        for (int k = 0; k < POOL_TASKS; k++) pthread_create(&th[k], NULL, pool_task, &tasks[k]);
        for (int k = 0; k < POOL_TASKS; k++) {
            pthread_join(th[k], NULL);
            c.queries += tasks[k].counts.queries;
            c.rows += tasks[k].counts.rows;
        }
    } else {
        fprintf(stderr, "libpq_bench: unknown workload %s\n", w);
        return 2;
    }
    uint64_t wall = now_ns() - wall0, cpu = cpu_ns() - cpu0, sys = sys_ns() - sys0;
    uint64_t faults = minflt() - flt0;
    if (is_bulk_copy) {
        PGresult *r = PQexec(conn, "SELECT count(*) FROM bench_bulk");
        if (PQresultStatus(r) != PGRES_TUPLES_OK) die(conn, "count");
        if (strtoull(PQgetvalue(r, 0, 0), NULL, 10) != n) {
            fprintf(stderr, "libpq_bench: bench_bulk holds %s rows after inserting %llu\n",
                    PQgetvalue(r, 0, 0), (unsigned long long)n);
            return 1;
        }
        PQclear(r);
    }
    report(c, wall, cpu, sys, faults);
    return 0;
}
