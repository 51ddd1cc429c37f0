/*
 * bench_responder: the cheapest possible answer from libmicrohttpd, run with the daemon
 * options the recallgate server uses (thread per connection, internal polling thread,
 * connection limit and timeout). scripts/bench measures it to get the HTTP ceiling of this
 * machine: every request, whatever its method, path or body, gets 200 and a small JSON body
 * shaped like a thread memory mode answer.
 *
 * usage: bench_responder PORT     (listens on 127.0.0.1:PORT until SIGINT or SIGTERM)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BENCH_MAX_CONNECTIONS 256u
#define BENCH_CONNECTION_TIMEOUT_S 30u

static const char bench_body[] =
    "{\"thread_id\":\"t\",\"mode\":\"enabled\",\"revision\":0,\"effective_at\":null}";

/* Shared by every connection: libmicrohttpd reference-counts responses under a lock. */
static struct MHD_Response *bench_response;

/* Marks a request whose headers have been seen; the body calls only discard data. */
static int bench_request_started;

static enum MHD_Result bench_answer(void *cls, struct MHD_Connection *connection,
                                    const char *url, const char *method,
                                    const char *version, const char *upload_data,
                                    size_t *upload_data_size, void **req_cls)
{
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload_data;
    if (*req_cls == NULL) {
        /* First call: headers only. */
        *req_cls = &bench_request_started;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        /* A body chunk: consume it. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, bench_response);
}

static int bench_parse_port(const char *text, uint16_t *port)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > 65535)
        return -1;
    *port = (uint16_t)value;
    return 0;
}

int main(int argc, char **argv)
{
    uint16_t port = 0;
    if (argc != 2 || bench_parse_port(argv[1], &port) != 0) {
        fprintf(stderr, "usage: bench_responder PORT\n");
        return 2;
    }

    /* Block the stop signals in every thread (the daemon's inherit the mask) and wait for
     * them here. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0) {
        fprintf(stderr, "bench_responder: cannot block signals\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    bench_response = MHD_create_response_from_buffer(
        sizeof bench_body - 1, (void *)(uintptr_t)bench_body, MHD_RESPMEM_PERSISTENT);
    if (bench_response == NULL ||
        MHD_add_response_header(bench_response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "application/json; charset=utf-8") != MHD_YES) {
        fprintf(stderr, "bench_responder: cannot create the response\n");
        return 1;
    }

    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
        port, NULL, NULL, bench_answer, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)BENCH_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)BENCH_CONNECTION_TIMEOUT_S,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "bench_responder: cannot listen on 127.0.0.1:%u\n", (unsigned)port);
        MHD_destroy_response(bench_response);
        return 1;
    }

    int sig = 0;
    while (sigwait(&stop_signals, &sig) != 0) {
        /* retry */
    }

    MHD_stop_daemon(daemon);
    MHD_destroy_response(bench_response);
    return 0;
}
