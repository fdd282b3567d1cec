/* cql.c — benchmark of CQL against DynamoDB's HTTP API on one `quarry serve --cql`.
 *
 * In one run, on the same server and the same data (each row written to a CQL table and to a
 * DynamoDB table alike): point writes (EXECUTE of a prepared INSERT against PutItem), point
 * reads (prepared SELECT by the full key against GetItem) and a 50-row slice of one
 * partition (SELECT ... LIMIT 50 against Query with Limit 50). Both protocols are driven by
 * the same client: blocking sockets, one thread per connection, each writing DEPTH requests
 * back to back and then reading their DEPTH answers (CQL streams; HTTP/1.1 pipelining), so
 * the ratios compare the protocols and their front ends, not client libraries. Neither side
 * authenticates (the HTTP requests carry an unverified SigV4 header, as a loopback server
 * without --credentials accepts). Shared machines are noisy: compare the ratios.
 *
 *   build/bench/cql [SECONDS [CONNS [DEPTH]]]   starts build/quarry serve (--no-sync,
 *                                                --capacity off) in a temporary folder
 *   QUARRY_BIN=... selects the server binary; HTTP_PORT and CQL_PORT use a running one;
 *   ONLY=write, read or slice measures that operation alone. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cqlwire/cql_codec.h"
#include "cqlwire/cql_frame.h"
#include "util/buf.h"

#define USERS 10000
#define SLICES 20
#define PER_SLICE 60
#define PAYLOAD_BYTES 100
#define HTTP_TABLE "bench_http"
#define CQL_VERSION_USED 4

static char payload[PAYLOAD_BYTES + 1];
static unsigned http_port, cql_port;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench/cql: %s\n", what);
    exit(1);
}

/* ---- a connection: a socket and a read buffer ---- */

typedef struct conn {
    int fd;
    char *in;
    size_t have, cap;
} conn;

static void conn_open(conn *c, unsigned port)
{
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) die("cannot connect");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->cap = 1 << 20;
    c->in = malloc(c->cap);
    c->have = 0;
}

static void conn_close(conn *c)
{
    close(c->fd);
    free(c->in);
}

static void send_all(conn *c, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(c->fd, s, n);
        if (w <= 0) die("write failed");
        s += w;
        n -= (size_t)w;
    }
}

/* Makes sure n bytes are buffered. */
static void need(conn *c, size_t n)
{
    if (n > c->cap) {
        while (c->cap < n)
            c->cap *= 2;
        c->in = realloc(c->in, c->cap);
    }
    while (c->have < n) {
        ssize_t r = read(c->fd, c->in + c->have, c->cap - c->have);
        if (r <= 0) die("the server closed the connection");
        c->have += (size_t)r;
    }
}

static void consume(conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->have - n);
    c->have -= n;
}

/* ---- HTTP ---- */

static void http_request(buf *out, const char *op, const char *body, size_t len)
{
    buf_printf(out,
               "POST / HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
               "Content-Type: application/x-amz-json-1.0\r\n"
               "X-Amz-Target: DynamoDB_20120810.%s\r\nX-Amz-Date: 20261202T000000Z\r\n"
               "Authorization: AWS4-HMAC-SHA256 Credential=bench/20261202/us-east-1/dynamodb/"
               "aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00\r\n"
               "Content-Length: %zu\r\n\r\n",
               http_port, op, len);
    buf_append(out, body, len);
}

/* Reads one response; returns its status and copies up to cap-1 bytes of its body. */
static int http_response(conn *c, char *body, size_t cap)
{
    size_t at = 0;
    char *end;
    for (;;) {
        need(c, at + 1);
        c->in[c->have < c->cap ? c->have : c->cap - 1] = '\0';
        end = memmem(c->in, c->have, "\r\n\r\n", 4);
        if (end) break;
        at = c->have;
    }
    int status = atoi(c->in + 9);
    size_t head = (size_t)(end + 4 - c->in);
    char *cl = memmem(c->in, head, "Content-Length: ", 16);
    if (cl == NULL) cl = memmem(c->in, head, "content-length: ", 16);
    size_t len = cl ? strtoul(cl + 16, NULL, 10) : 0;
    need(c, head + len);
    if (body) {
        size_t n = len < cap - 1 ? len : cap - 1;
        memcpy(body, c->in + head, n);
        body[n] = '\0';
    }
    consume(c, head + len);
    return status;
}

static void http_call(conn *c, const char *op, const char *body, char *answer, size_t cap)
{
    buf b;
    buf_init(&b, 0);
    http_request(&b, op, body, strlen(body));
    send_all(c, b.data, b.len);
    buf_free(&b);
    int status = http_response(c, answer, cap);
    if (status != 200 && !(answer && strstr(answer, "ResourceInUseException"))) {
        fprintf(stderr, "bench/cql: %s answered %d: %s\n", op, status, answer ? answer : "");
        exit(1);
    }
}

/* ---- CQL ---- */

typedef struct cql_answer {
    uint8_t opcode;
    char *body;
    uint32_t len;
} cql_answer;

/* Reads one envelope into a (its body stays valid until the next read). */
static void cql_read(conn *c, cql_answer *a, size_t *used)
{
    need(c, CQL_HEADER_LEN);
    uint32_t len = be32_read(c->in + 5);
    need(c, CQL_HEADER_LEN + len);
    a->opcode = (uint8_t)c->in[4];
    a->body = c->in + CQL_HEADER_LEN;
    a->len = len;
    *used = CQL_HEADER_LEN + len;
}

static void cql_fail(const cql_answer *a, const char *what)
{
    if (a->opcode == CQL_OP_ERROR && a->len >= 6) {
        uint16_t n = be16_read(a->body + 4);
        fprintf(stderr, "bench/cql: %s: error 0x%04x %.*s\n", what, be32_read(a->body),
                (int)(n < a->len - 6 ? n : a->len - 6), a->body + 6);
    } else {
        fprintf(stderr, "bench/cql: %s: opcode 0x%02x\n", what, a->opcode);
    }
    exit(1);
}

static void send_query(conn *c, const char *text)
{
    buf b;
    buf_init(&b, 0);
    size_t start = cql_envelope_begin(&b, CQL_VERSION_USED, 0, 0, CQL_OP_QUERY);
    cql_put_long_string(&b, text, strlen(text));
    cql_put_consistency(&b, CQL_CL_ONE);
    cql_put_byte(&b, 0);
    cql_envelope_end(&b, start);
    send_all(c, b.data, b.len);
    buf_free(&b);
    cql_answer a;
    size_t used;
    cql_read(c, &a, &used);
    if (a.opcode != CQL_OP_RESULT) cql_fail(&a, text);
    consume(c, used);
}

static void send_startup(conn *c)
{
    buf b;
    buf_init(&b, 0);
    size_t start = cql_envelope_begin(&b, CQL_VERSION_USED, 0, 0, CQL_OP_STARTUP);
    cql_text_pair opts[] = {{"CQL_VERSION", "3.0.0"}};
    cql_put_string_map(&b, opts, 1);
    cql_envelope_end(&b, start);
    send_all(c, b.data, b.len);
    buf_free(&b);
    cql_answer a;
    size_t used;
    cql_read(c, &a, &used);
    if (a.opcode != CQL_OP_READY) cql_fail(&a, "STARTUP");
    consume(c, used);
}

typedef struct prepared {
    uint8_t id[64];
    uint16_t len;
} prepared;

static void send_prepare(conn *c, const char *text, prepared *p)
{
    buf b;
    buf_init(&b, 0);
    size_t start = cql_envelope_begin(&b, CQL_VERSION_USED, 0, 0, CQL_OP_PREPARE);
    cql_put_long_string(&b, text, strlen(text));
    cql_envelope_end(&b, start);
    send_all(c, b.data, b.len);
    buf_free(&b);
    cql_answer a;
    size_t used;
    cql_read(c, &a, &used);
    if (a.opcode != CQL_OP_RESULT || a.len < 6 || be32_read(a.body) != CQL_RESULT_PREPARED)
        cql_fail(&a, text);
    p->len = be16_read(a.body + 4);
    if (p->len > sizeof p->id || 6u + p->len > a.len) die("a prepared id too long");
    memcpy(p->id, a.body + 6, p->len);
    consume(c, used);
}

/* An EXECUTE of p with n values (text when len >= 0 is given by s, else an int v). */
typedef struct bound {
    const char *s; /* NULL: the int */
    int32_t v;
} bound;

static void add_execute(buf *out, int16_t stream, const prepared *p, const bound *vals, int n)
{
    size_t start = cql_envelope_begin(out, CQL_VERSION_USED, 0, stream, CQL_OP_EXECUTE);
    cql_put_short_bytes(out, p->id, p->len);
    cql_put_consistency(out, CQL_CL_ONE);
    cql_put_byte(out, CQL_QF_VALUES | CQL_QF_SKIP_METADATA | CQL_QF_PAGE_SIZE);
    cql_put_short(out, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        if (vals[i].s) {
            cql_put_bytes(out, vals[i].s, (int32_t)strlen(vals[i].s));
        } else {
            uint8_t be[4] = {(uint8_t)(vals[i].v >> 24), (uint8_t)(vals[i].v >> 16),
                             (uint8_t)(vals[i].v >> 8), (uint8_t)vals[i].v};
            cql_put_bytes(out, be, 4);
        }
    }
    cql_put_int(out, 5000);
    cql_envelope_end(out, start);
}

/* The row count of a Rows result (its metadata read past), -1 for a Void result, -2 for
 * anything else. */
static int32_t rows_of(const cql_answer *a)
{
    cql_pool pool = {0};
    cql_reader r;
    cql_reader_init(&r, a->body, a->len, &pool);
    int32_t kind = 0, flags = 0, columns = 0, rows = -2;
    cql_read_int(&r, "kind", &kind);
    if (kind == CQL_RESULT_VOID) return -1;
    if (kind != CQL_RESULT_ROWS) return -2;
    cql_read_int(&r, "flags", &flags);
    cql_read_int(&r, "columns", &columns);
    cql_value paging;
    if (flags & CQL_ROWS_HAS_MORE_PAGES) cql_read_bytes(&r, "paging state", &paging);
    if (!(flags & CQL_ROWS_NO_METADATA)) {
        cql_str ks, table, name;
        int global = (flags & CQL_ROWS_GLOBAL_TABLES_SPEC) != 0;
        if (global) {
            cql_read_string(&r, "keyspace", &ks);
            cql_read_string(&r, "table", &table);
        }
        for (int32_t i = 0; i < columns && !r.err[0]; i++) {
            if (!global) {
                cql_read_string(&r, "keyspace", &ks);
                cql_read_string(&r, "table", &table);
            }
            cql_read_string(&r, "name", &name);
            cql_type *t;
            cql_read_type(&r, "type", &t);
        }
    }
    if (cql_read_int(&r, "rows", &rows) != 0) rows = -2;
    cql_pool_free(&pool);
    return rows;
}

/* ---- the operations ---- */

typedef enum op { OP_PUT, OP_GET, OP_SLICE } op;
static const char *const op_names[] = {"point write", "point read", "50-row slice"};

static prepared p_insert, p_get, p_slice;

typedef struct worker {
    pthread_t thread;
    int cql;
    op what;
    unsigned depth, id;
    double until;
    unsigned long done;
    unsigned seed;
} worker;

static atomic_ulong write_seq;

/* Appends one request of w's operation to out. */
static void add_request(worker *w, buf *out, int16_t stream)
{
    char key[64], body[512];
    unsigned r = (unsigned)rand_r(&w->seed);
    if (w->what == OP_PUT)
        snprintf(key, sizeof key, "w%lu", (unsigned long)atomic_fetch_add(&write_seq, 1));
    else if (w->what == OP_GET)
        snprintf(key, sizeof key, "user#%05u", r % USERS);
    else
        snprintf(key, sizeof key, "slice#%02u", r % SLICES);
    if (w->cql) {
        bound v[3] = {{key, 0}, {NULL, 0}, {payload, 0}};
        add_execute(out, stream,
                    w->what == OP_PUT   ? &p_insert
                    : w->what == OP_GET ? &p_get
                                        : &p_slice,
                    v,
                    w->what == OP_PUT   ? 3
                    : w->what == OP_GET ? 2
                                        : 1);
        return;
    }
    if (w->what == OP_PUT)
        snprintf(body, sizeof body,
                 "{\"TableName\":\"" HTTP_TABLE "\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"N\":"
                 "\"0\"},\"payload\":{\"S\":\"%s\"}}}",
                 key, payload);
    else if (w->what == OP_GET)
        snprintf(body, sizeof body,
                 "{\"TableName\":\"" HTTP_TABLE "\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"N\":"
                 "\"0\"}}}",
                 key);
    else
        snprintf(body, sizeof body,
                 "{\"TableName\":\"" HTTP_TABLE "\",\"KeyConditionExpression\":\"pk = :p\","
                 "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"%s\"}},\"Limit\":50}",
                 key);
    http_request(out,
                 w->what == OP_PUT   ? "PutItem"
                 : w->what == OP_GET ? "GetItem"
                                     : "Query",
                 body, strlen(body));
}

/* Reads one answer of w's operation and checks it. */
static void read_answer(worker *w, conn *c)
{
    if (w->cql) {
        cql_answer a;
        size_t used;
        cql_read(c, &a, &used);
        int32_t want = w->what == OP_PUT ? -1 : w->what == OP_GET ? 1 : 50;
        if (a.opcode != CQL_OP_RESULT || rows_of(&a) != want) cql_fail(&a, op_names[w->what]);
        consume(c, used);
        return;
    }
    static _Thread_local char body[32768];
    int status = http_response(c, body, sizeof body);
    const char *want = w->what == OP_PUT ? "{}" : w->what == OP_GET ? "{\"Item\"" : "\"Count\":50";
    if (status != 200 || (w->what == OP_SLICE ? strstr(body, want) == NULL
                                              : strncmp(body, want, strlen(want)) != 0)) {
        fprintf(stderr, "bench/cql: %s over HTTP answered %d: %s\n", op_names[w->what], status,
                body);
        exit(1);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    conn c;
    conn_open(&c, w->cql ? cql_port : http_port);
    if (w->cql) send_startup(&c);
    buf out;
    buf_init(&out, 0);
    while (now() < w->until) {
        buf_reset(&out);
        for (unsigned i = 0; i < w->depth; i++)
            add_request(w, &out, (int16_t)i);
        send_all(&c, out.data, out.len);
        for (unsigned i = 0; i < w->depth; i++)
            read_answer(w, &c);
        w->done += w->depth;
    }
    buf_free(&out);
    conn_close(&c);
    return NULL;
}

static double measure(int cql, op what, unsigned conns, unsigned depth, double seconds)
{
    worker *ws = calloc(conns, sizeof *ws);
    double t0 = now();
    for (unsigned i = 0; i < conns; i++) {
        ws[i] = (worker){.cql = cql,
                         .what = what,
                         .depth = depth,
                         .id = i,
                         .until = t0 + seconds,
                         .seed = 7919u * (i + 1) + (unsigned)what};
        pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
    }
    unsigned long done = 0;
    for (unsigned i = 0; i < conns; i++) {
        pthread_join(ws[i].thread, NULL);
        done += ws[i].done;
    }
    double rate = (double)done / (now() - t0);
    free(ws);
    return rate;
}

/* ---- the data ---- */

static void load(void)
{
    conn h, q;
    conn_open(&h, http_port);
    conn_open(&q, cql_port);
    char answer[512];
    http_call(&h, "CreateTable",
              "{\"TableName\":\"" HTTP_TABLE "\",\"BillingMode\":\"PAY_PER_REQUEST\","
              "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
              "{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],\"KeySchema\":[{"
              "\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
              "\"KeyType\":\"RANGE\"}]}",
              answer, sizeof answer);
    send_startup(&q);
    send_query(&q, "CREATE KEYSPACE IF NOT EXISTS bench WITH replication = "
                   "{'class': 'SimpleStrategy', 'replication_factor': 1}");
    send_query(&q, "CREATE TABLE IF NOT EXISTS bench.items (pk text, sk int, payload text, "
                   "PRIMARY KEY (pk, sk))");
    send_prepare(&q, "INSERT INTO bench.items (pk, sk, payload) VALUES (?, ?, ?)", &p_insert);
    send_prepare(&q, "SELECT pk, sk, payload FROM bench.items WHERE pk = ? AND sk = ?", &p_get);
    send_prepare(&q, "SELECT pk, sk, payload FROM bench.items WHERE pk = ? LIMIT 50", &p_slice);

    /* The same rows into both tables, 100 requests in flight on each connection. */
    worker hw = {.cql = 0, .what = OP_PUT}, qw = {.cql = 1, .what = OP_PUT};
    buf hb, qb;
    buf_init(&hb, 0);
    buf_init(&qb, 0);
    unsigned total = USERS + SLICES * PER_SLICE, sent = 0;
    while (sent < total) {
        buf_reset(&hb);
        buf_reset(&qb);
        unsigned n = 0;
        for (; n < 100 && sent < total; n++, sent++) {
            char key[64], body[512];
            int32_t sk = 0;
            if (sent < USERS) {
                snprintf(key, sizeof key, "user#%05u", sent);
            } else {
                snprintf(key, sizeof key, "slice#%02u", (sent - USERS) / PER_SLICE);
                sk = (int32_t)((sent - USERS) % PER_SLICE);
            }
            snprintf(body, sizeof body,
                     "{\"TableName\":\"" HTTP_TABLE "\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{"
                     "\"N\":\"%d\"},\"payload\":{\"S\":\"%s\"}}}",
                     key, sk, payload);
            http_request(&hb, "PutItem", body, strlen(body));
            bound v[3] = {{key, 0}, {NULL, sk}, {payload, 0}};
            add_execute(&qb, (int16_t)n, &p_insert, v, 3);
        }
        send_all(&h, hb.data, hb.len);
        send_all(&q, qb.data, qb.len);
        for (unsigned i = 0; i < n; i++) {
            read_answer(&hw, &h);
            read_answer(&qw, &q);
        }
    }
    buf_free(&hb);
    buf_free(&qb);
    conn_close(&h);
    conn_close(&q);
}

/* ---- a server of our own ---- */

static pid_t server_pid;
static char data_dir[256];

static void start_server(const char *argv0)
{
    char bin[1024];
    const char *env = getenv("QUARRY_BIN");
    if (env) {
        snprintf(bin, sizeof bin, "%s", env);
    } else {
        snprintf(bin, sizeof bin, "%s", argv0);
        char *slash = strrchr(bin, '/');
        if (slash) *slash = '\0';
        slash = strrchr(bin, '/');
        if (slash)
            strcpy(slash, "/quarry");
        else
            snprintf(bin, sizeof bin, "../quarry");
    }
    snprintf(data_dir, sizeof data_dir, "/tmp/quarry-bench-cql.XXXXXX");
    if (mkdtemp(data_dir) == NULL) die("cannot make a temporary folder");
    int out[2];
    if (pipe(out) != 0) die("pipe");
    server_pid = fork();
    if (server_pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--cql", "127.0.0.1:0", "--data",
              data_dir, "--no-sync", "--capacity", "off", "--log-level", "error", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char banner[8192];
    size_t n = 0;
    while (n < sizeof banner - 1 &&
           (!strstr(banner, "CQL: listening") || !memchr(banner, '\n', n))) {
        ssize_t r = read(out[0], banner + n, sizeof banner - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        banner[n] = '\0';
        const char *cq = strstr(banner, "CQL: listening");
        if (cq && strchr(cq, '\n')) break;
    }
    banner[n] = '\0';
    const char *h = strstr(banner, "http://127.0.0.1:");
    const char *cq = strstr(banner, "CQL: listening on 127.0.0.1 port ");
    if (h == NULL || cq == NULL) {
        fprintf(stderr, "bench/cql: %s did not start:\n%s\n", bin, banner);
        exit(1);
    }
    http_port = (unsigned)atoi(h + strlen("http://127.0.0.1:"));
    cql_port = (unsigned)atoi(cq + strlen("CQL: listening on 127.0.0.1 port "));
    close(out[0]);
}

static void stop_server(void)
{
    if (server_pid <= 0) return;
    pid_t pid = server_pid;
    server_pid = 0;
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", data_dir);
    if (system(cmd) != 0) fprintf(stderr, "bench/cql: could not remove %s\n", data_dir);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    unsigned conns = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
    unsigned depth = argc > 3 ? (unsigned)atoi(argv[3]) : 8;
    if (seconds <= 0 || conns == 0 || depth == 0 || depth > 1000) {
        fprintf(stderr, "usage: %s [SECONDS [CONNS [DEPTH]]]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    memset(payload, 'x', PAYLOAD_BYTES);
    if (getenv("HTTP_PORT") && getenv("CQL_PORT")) {
        http_port = (unsigned)atoi(getenv("HTTP_PORT"));
        cql_port = (unsigned)atoi(getenv("CQL_PORT"));
    } else {
        start_server(argv[0]);
        atexit(stop_server); /* also when a check fails and exits */
    }
    load();
    printf("bench/cql: %u connections x %u requests in flight, %.1f s each, %u + %u rows\n", conns,
           depth, seconds, USERS, SLICES * PER_SLICE);
    printf("| operation | CQL/s | DynamoDB HTTP/s | CQL / HTTP |\n|---|---:|---:|---:|\n");
    const char *only = getenv("ONLY"); /* "write", "read" or "slice": that one alone */
    for (op what = OP_PUT; what <= OP_SLICE; what++) {
        static const char *const words[] = {"write", "read", "slice"};
        if (only && strcmp(only, words[what]) != 0) continue;
        /* Alternating, twice, so that drift in the machine's load falls on both. */
        double http = measure(0, what, conns, depth, seconds / 2);
        double cql = measure(1, what, conns, depth, seconds / 2);
        cql += measure(1, what, conns, depth, seconds / 2);
        http += measure(0, what, conns, depth, seconds / 2);
        printf("| %s | %.0f | %.0f | %.2f |\n", op_names[what], cql / 2, http / 2, cql / http);
        fflush(stdout);
    }
    return 0;
}
