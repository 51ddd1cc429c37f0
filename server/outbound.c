#include "server/outbound.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>

#include "server/clock.h"

/* One easy handle per thread, kept across calls (curl_easy_reset keeps its connection and
 * DNS caches, so a provider's keep-alive connection is reused); freed when the thread ends. */
static pthread_key_t handle_key;
static pthread_once_t handle_once = PTHREAD_ONCE_INIT;

static void handle_free(void *h)
{
	curl_easy_cleanup(h);
}

static void handle_key_init(void)
{
	(void)pthread_key_create(&handle_key, handle_free);
}

static CURL *thread_handle(void)
{
	pthread_once(&handle_once, handle_key_init);
	CURL *h = pthread_getspecific(handle_key);
	if (h == NULL) {
		h = curl_easy_init();
		if (h != NULL && pthread_setspecific(handle_key, h) != 0) {
			curl_easy_cleanup(h);
			h = NULL;
		}
	} else {
		curl_easy_reset(h);
	}
	return h;
}

struct sink {
	char *buf;
	size_t len, cap;
	bool oversize;
};

/* Stops the transfer (returns 0) as soon as the answer would pass the cap. */
static size_t sink_write(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	if (len > H_CALL_BODY_MAX - s->len) {
		s->oversize = true;
		return 0;
	}
	if (s->len + len + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + len + 1)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (nb == NULL)
			return 0;
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	s->buf[s->len] = '\0';
	return len;
}

static bool hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool outbound_traceparent_valid(const char *s)
{
	return s != NULL && strlen(s) == 55 && hex_run(s, 2) && s[2] == '-' &&
	       hex_run(s + 3, 32) && s[35] == '-' && hex_run(s + 36, 16) && s[52] == '-' &&
	       hex_run(s + 53, 2);
}

/* CLOCK_MONOTONIC ms at which every provider call ends (the drain), 0 while serving. */
static atomic_llong cut_at_ms;

void outbound_cut_at(long long mono_ms)
{
	atomic_store(&cut_at_ms, mono_ms);
}

/* libcurl asks at least once a second, also while a provider sends nothing. */
static int check_cut(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		     curl_off_t ulnow)
{
	(void)arg;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	long long cut = atomic_load(&cut_at_ms);
	return cut != 0 && mono_ms() >= cut;
}

static enum h_call_outcome transport_outcome(CURLcode rc, const struct sink *s)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_ABORTED_BY_CALLBACK: /* cut by the drain: the call's time is up */
		return H_CALL_TIMEOUT;
	case CURLE_FILESIZE_EXCEEDED:
		return H_CALL_OVERSIZE;
	case CURLE_WRITE_ERROR:
		return s->oversize ? H_CALL_OVERSIZE : H_CALL_UNREACHABLE;
	default:
		return H_CALL_UNREACHABLE;
	}
}

void outbound_call(const struct h_call *call, const char *traceparent,
		   struct h_call_result *out)
{
	memset(out, 0, sizeof *out);
	long long started = mono_ms();
	struct sink sink = {0};
	struct curl_slist *headers = NULL;
	char tp[80];
	CURL *h = thread_handle();
	if (h == NULL) {
		out->outcome = H_CALL_UNREACHABLE;
		return;
	}
	headers = curl_slist_append(headers, "Accept: application/json");
	headers = curl_slist_append(headers, "Expect:");
	if (call->body != NULL)
		headers = curl_slist_append(headers, "Content-Type: application/json");
	if (outbound_traceparent_valid(traceparent)) {
		snprintf(tp, sizeof tp, "traceparent: %s", traceparent);
		headers = curl_slist_append(headers, tp);
	}
	long deadline = call->deadline_ms > 0 ? (long)call->deadline_ms : 1;
	long long cut = atomic_load(&cut_at_ms);
	if (cut != 0 && cut - started < deadline)
		deadline = cut - started > 1 ? (long)(cut - started) : 1;
	curl_easy_setopt(h, CURLOPT_URL, call->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, deadline);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, deadline);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)H_CALL_BODY_MAX);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "recallgate");
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, check_cut);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	if (strcmp(call->method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, call->body ? call->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(call->body ? call->body_len : 0));
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}

	CURLcode rc = curl_easy_perform(h);
	out->latency_ms = mono_ms() - started;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->http_status);
	/* the handle outlives this call: it must not point at our stack or the list */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
	curl_slist_free_all(headers);
	bool answered = out->http_status >= 100;
	bool success = out->http_status >= 200 && out->http_status <= 299;
	/* a non-2xx answer is an HTTP error whatever its size (the cap only stopped reading) */
	if (rc != CURLE_OK &&
	    !(answered && !success && transport_outcome(rc, &sink) == H_CALL_OVERSIZE)) {
		out->outcome = transport_outcome(rc, &sink);
		free(sink.buf);
		return;
	}
	if (!success) {
		out->outcome = H_CALL_HTTP_ERROR;
		free(sink.buf);
		return;
	}
	out->outcome = H_CALL_OK;
	if (sink.buf == NULL)
		sink.buf = calloc(1, 1);
	if (sink.buf == NULL) {
		out->outcome = H_CALL_UNREACHABLE;
		return;
	}
	out->body = sink.buf;
	out->body_len = sink.len;
}
