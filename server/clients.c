#include "server/clients.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cl_entry {
	unsigned in_flight; /* 0: a free counter */
	char key[CLIENTS_KEY_MAX + 1];
};

struct cl_set {
	pthread_mutex_t mu;
	struct cl_entry e[CLIENTS_WAYS];
};

static struct {
	unsigned limit;
	struct cl_set *sets;
	atomic_ullong refused, untracked;
} cl;

/* FNV-1a: spreads addresses over the sets. */
static unsigned set_of(const char *key)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % CLIENTS_SETS;
}

bool clients_init(unsigned limit)
{
	cl.limit = limit;
	cl.sets = NULL;
	atomic_store(&cl.refused, 0);
	atomic_store(&cl.untracked, 0);
	if (limit == 0)
		return true;
	cl.sets = calloc(CLIENTS_SETS, sizeof *cl.sets);
	if (cl.sets == NULL)
		return false;
	for (size_t i = 0; i < CLIENTS_SETS; i++)
		pthread_mutex_init(&cl.sets[i].mu, NULL);
	return true;
}

void clients_shutdown(void)
{
	if (cl.sets)
		for (size_t i = 0; i < CLIENTS_SETS; i++)
			pthread_mutex_destroy(&cl.sets[i].mu);
	free(cl.sets);
	cl.sets = NULL;
	cl.limit = 0;
}

bool clients_enter(const char *client, struct clients_ticket *t)
{
	memset(t, 0, sizeof *t);
	if (cl.sets == NULL)
		return true;
	char key[CLIENTS_KEY_MAX + 1];
	snprintf(key, sizeof key, "%s", client);
	unsigned s = set_of(key);
	struct cl_set *set = &cl.sets[s];
	int mine = -1, free_way = -1;
	pthread_mutex_lock(&set->mu);
	for (int w = 0; w < CLIENTS_WAYS; w++) {
		if (set->e[w].in_flight == 0) {
			if (free_way < 0)
				free_way = w;
		} else if (strcmp(set->e[w].key, key) == 0) {
			mine = w;
		}
	}
	bool admitted = true;
	if (mine >= 0 && set->e[mine].in_flight >= cl.limit) {
		admitted = false;
	} else if (mine < 0 && free_way >= 0) {
		mine = free_way;
		memcpy(set->e[mine].key, key, sizeof key);
	}
	if (admitted && mine >= 0) {
		set->e[mine].in_flight++;
		*t = (struct clients_ticket){true, s, (unsigned)mine};
	}
	pthread_mutex_unlock(&set->mu);
	if (!admitted)
		atomic_fetch_add(&cl.refused, 1);
	else if (mine < 0)
		atomic_fetch_add(&cl.untracked, 1);
	return admitted;
}

void clients_leave(const struct clients_ticket *t)
{
	if (!t->counted || cl.sets == NULL)
		return;
	struct cl_set *set = &cl.sets[t->set];
	pthread_mutex_lock(&set->mu);
	if (set->e[t->way].in_flight > 0)
		set->e[t->way].in_flight--;
	pthread_mutex_unlock(&set->mu);
}

bool clients_forwarded(const char *xff, char *out, size_t size)
{
	if (xff == NULL || size == 0)
		return false;
	const char *last = strrchr(xff, ',');
	const char *p = last ? last + 1 : xff;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n == 0)
		return false;
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

void clients_get_stats(struct clients_stats *out)
{
	out->refused = atomic_load(&cl.refused);
	out->untracked = atomic_load(&cl.untracked);
}
