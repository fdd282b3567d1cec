/* test_bodybound.c — the bound on request bytes being read, over real loopback TCP sockets
 * on one h2o event loop, with a stand-in protocol that reads a request of a known size,
 * stops reading once it has it all and is answered (its bytes consumed) when the test
 * says: connections pause once the bound is reached, one always reads on, the paused
 * resume as bytes are freed and every request completes, a request larger than the bound
 * completes alone, and a connection closed while paused gives its share back.
 * The pure rules are checked first. core_conn_data is the test's own: the core is not
 * linked, and the stand-in keeps each socket's bodybound_conn itself. */
#include "check.h"
#include "server/bodybound.h"
#include "server/core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:h2o_multithread_create_queue\nleak:h2o_mem_alloc_recycle\n";
}
#endif

#define LIMIT ((size_t)1 << 20)

/* A server-side connection of the stand-in protocol. */
typedef struct conn {
    h2o_socket_t *sock;
    bodybound_conn *watch;
    size_t want;   /* the request's size */
    int complete;  /* it has all of it (and stopped reading) */
    int order;     /* when it completed, 1 first */
    int client_fd; /* the other end */
    size_t sent;   /* bytes the client has sent */
} conn;

static int completions;

void *core_conn_data(h2o_socket_t *sock)
{
    return ((conn *)sock->data)->watch;
}

static void proto_read(h2o_socket_t *sock, const char *err)
{
    conn *c = sock->data;
    if (err) return;
    if (sock->input->size >= c->want && !c->complete) {
        c->complete = 1;
        c->order = ++completions;
        h2o_socket_read_stop(sock);
    }
}

/* The stand-in's answer: the request's bytes are consumed, and it reads again. */
static void answer(conn *c)
{
    h2o_buffer_consume(&c->sock->input, c->sock->input->size);
    c->complete = 0;
    c->want = SIZE_MAX;
    h2o_socket_read_start(c->sock, proto_read);
}

static int listen_fd;
static struct sockaddr_in addr;

static void open_conn(h2o_evloop_t *ev, bodybound_loop *bl, conn *c, size_t want)
{
    memset(c, 0, sizeof *c);
    c->want = want;
    c->client_fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(c->client_fd, (struct sockaddr *)&addr, sizeof addr) == 0, "connect: %s",
          strerror(errno));
    fcntl(c->client_fd, F_SETFL, O_NONBLOCK);
    int fd = accept(listen_fd, NULL, NULL);
    CHECK(fd >= 0, "accept");
    c->sock = h2o_evloop_socket_create(ev, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
    c->sock->data = c;
    h2o_socket_read_start(c->sock, proto_read);
    c->watch = bodybound_watch(bl, c->sock);
    CHECK(c->watch != NULL, "watch");
}

/* The client sends what the socket takes, up to its request's size. */
static void send_some(conn *c, size_t total)
{
    static char chunk[64 << 10];
    while (c->sent < total) {
        size_t n = total - c->sent < sizeof chunk ? total - c->sent : sizeof chunk;
        ssize_t w = write(c->client_fd, chunk, n);
        if (w <= 0) return;
        c->sent += (size_t)w;
    }
}

/* One turn of the loop as the core runs it: poll and run, then the turn's end. */
static void turn(h2o_evloop_t *ev, bodybound_loop *bl)
{
    h2o_evloop_run(ev, 5);
    bodybound_turn_end(bl);
}

static void close_conn(conn *c)
{
    bodybound_closed(c->watch);
    h2o_socket_close(c->sock);
    close(c->client_fd);
}

static void check_rules(void)
{
    CHECK_THAT(bodybound_may_read(0, LIMIT, LIMIT * 4));
    CHECK_THAT(bodybound_may_read(LIMIT - 1, LIMIT, BODYBOUND_SMALL));
    CHECK_THAT(!bodybound_may_read(LIMIT, LIMIT, BODYBOUND_SMALL));
    CHECK_THAT(bodybound_may_read(LIMIT * 4, LIMIT, BODYBOUND_SMALL - 1));
    CHECK_THAT(bodybound_may_resume(LIMIT - 1, LIMIT, 3));
    CHECK_THAT(!bodybound_may_resume(LIMIT, LIMIT, 1));
    CHECK_THAT(bodybound_may_resume(LIMIT * 4, LIMIT, 0));
}

int main(void)
{
    check_rules();

    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    CHECK(bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
              listen(listen_fd, 16) == 0 &&
              getsockname(listen_fd, (struct sockaddr *)&addr, &len) == 0,
          "listen: %s", strerror(errno));

    h2o_evloop_t *ev = h2o_evloop_create();
    h2o_multithread_queue_t *queue = h2o_multithread_create_queue(ev);
    bodybound b;
    CHECK(bodybound_init(&b, LIMIT, 1) == 0, "init");
    bodybound_loop bl;
    bodybound_loop_open(&b, &bl, queue);

    /* Alone, a request three times the bound completes: it is the one that reads on. */
    conn big;
    open_conn(ev, &bl, &big, 3 * LIMIT);
    for (int i = 0; i < 2000 && !big.complete; i++) {
        send_some(&big, big.want);
        turn(ev, &bl);
    }
    CHECK(big.complete, "a request larger than the bound, alone, completed (%zu of %zu read)",
          big.sock->input->size, big.want);
    CHECK(bodybound_paused(&b) == 0, "paused %u", bodybound_paused(&b));
    CHECK(bodybound_held(&b) >= 3 * LIMIT, "held %zu", bodybound_held(&b));
    answer(&big);
    turn(ev, &bl);
    CHECK(bodybound_held(&b) == 0, "answered, it holds nothing: %zu", bodybound_held(&b));

    /* Four requests of 700 KB at once: past the bound some pause, and all complete, each
     * answered once it completes. */
    enum { N = 4 };
    conn c[N];
    size_t want = 700 << 10;
    for (int i = 0; i < N; i++)
        open_conn(ev, &bl, &c[i], want);
    unsigned most_paused = 0;
    size_t most_held = 0;
    int done = 0, first_paused = -1;
    completions = 0;
    for (int t = 0; t < 5000 && done < N; t++) {
        for (int i = 0; i < N; i++)
            send_some(&c[i], want);
        turn(ev, &bl);
        if (bodybound_paused(&b) > most_paused) most_paused = bodybound_paused(&b);
        if (bodybound_held(&b) > most_held) most_held = bodybound_held(&b);
        if (first_paused < 0)
            for (int i = 0; i < N; i++)
                if (c[i].watch->paused) first_paused = i;
        for (int i = 0; i < N; i++)
            if (c[i].complete) {
                answer(&c[i]);
                done++;
            }
    }
    CHECK(done == N, "%d of %d requests completed", done, N);
    CHECK(most_paused > 0 && most_paused < N, "at most %u of %d paused", most_paused, N);
    /* The bound, the one that reads on, and a first read of each (about twice its
     * receive buffer at most). */
    CHECK(most_held <= LIMIT + want + N * 4 * (size_t)BODYBOUND_RCVBUF, "held at most %zu",
          most_held);
    CHECK(first_paused >= 0, "one paused");
    turn(ev, &bl);
    CHECK(bodybound_held(&b) == 0 && bodybound_paused(&b) == 0, "held %zu, paused %u",
          bodybound_held(&b), bodybound_paused(&b));

    /* Two more requests past the bound: the one paused is closed and gives its share back. */
    conn d[2];
    for (int i = 0; i < 2; i++)
        open_conn(ev, &bl, &d[i], 2 * LIMIT);
    for (int t = 0; t < 2000 && bodybound_paused(&b) == 0; t++) {
        for (int i = 0; i < 2; i++)
            send_some(&d[i], d[i].want);
        turn(ev, &bl);
    }
    CHECK(bodybound_paused(&b) == 1, "one of two paused: %u", bodybound_paused(&b));
    int p = d[0].watch->paused ? 0 : 1;
    size_t before = bodybound_held(&b), share = d[p].watch->charge;
    close_conn(&d[p]);
    CHECK(bodybound_paused(&b) == 0, "paused %u", bodybound_paused(&b));
    CHECK(bodybound_held(&b) == before - share, "held %zu, was %zu less %zu", bodybound_held(&b),
          before, share);
    close_conn(&d[1 - p]);
    CHECK(bodybound_held(&b) == 0, "held %zu", bodybound_held(&b));

    close_conn(&big);
    for (int i = 0; i < N; i++)
        close_conn(&c[i]);
    turn(ev, &bl);
    bodybound_loop_close(&bl);
    bodybound_dispose(&b);
    h2o_multithread_destroy_queue(queue);
    close(listen_fd);
    return check_report("test_bodybound");
}
