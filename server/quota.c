#include "server/quota.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct quota_key {
	struct quota_key *next;
	unsigned held;
	char key[]; /* NUL-terminated */
};

struct quota {
	pthread_mutex_t mu;
	unsigned limit;
	struct quota_key *keys; /* every key with held > 0 */
};

bool quota_new(unsigned limit, struct quota **out)
{
	struct quota *q = calloc(1, sizeof *q);
	if (q == NULL)
		return false;
	pthread_mutex_init(&q->mu, NULL);
	q->limit = limit;
	*out = q;
	return true;
}

/* The key's entry, or NULL; *link is where it hangs (for unlinking). Under mu. */
static struct quota_key *find(struct quota *q, const char *key, struct quota_key ***link)
{
	struct quota_key **p = &q->keys;
	for (; *p; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0)
			break;
	*link = p;
	return *p;
}

bool quota_take(struct quota *q, const char *key)
{
	bool taken = false;
	struct quota_key **link;
	pthread_mutex_lock(&q->mu);
	struct quota_key *k = find(q, key, &link);
	if (k == NULL && q->limit > 0) {
		size_t n = strlen(key) + 1;
		k = malloc(sizeof *k + n);
		if (k != NULL) {
			memcpy(k->key, key, n);
			k->held = 0;
			k->next = q->keys;
			q->keys = k;
		}
	}
	if (k != NULL && k->held < q->limit) {
		k->held++;
		taken = true;
	}
	pthread_mutex_unlock(&q->mu);
	return taken;
}

void quota_give(struct quota *q, const char *key)
{
	struct quota_key **link;
	pthread_mutex_lock(&q->mu);
	struct quota_key *k = find(q, key, &link);
	if (k != NULL && k->held > 0 && --k->held == 0) {
		*link = k->next;
		free(k);
	}
	pthread_mutex_unlock(&q->mu);
}

unsigned quota_held(struct quota *q, const char *key)
{
	struct quota_key **link;
	pthread_mutex_lock(&q->mu);
	struct quota_key *k = find(q, key, &link);
	unsigned held = k ? k->held : 0;
	pthread_mutex_unlock(&q->mu);
	return held;
}

void quota_free(struct quota *q)
{
	if (q == NULL)
		return;
	for (struct quota_key *k = q->keys, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	pthread_mutex_destroy(&q->mu);
	free(q);
}
